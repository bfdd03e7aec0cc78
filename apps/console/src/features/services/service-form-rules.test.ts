import { maxMessage, messages, ruleMessages, type HttpService } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import {
  getHttpFieldAccess,
  getInitialHttpValues,
  getInitialTcpValues,
  LOCAL_SELF_HOST,
  toHttpBody,
  toTcpBody,
  validateHttpForm,
  validateTcpForm,
} from './service-form-rules';
import { buildHttpService } from './service-test-fixtures';
import { buildNode } from '../../test/fixtures';

const regularNode = buildNode();
const gatewayNode = buildNode({ id: 5, isGateway: true, gatewayNetwork: '192.168.1.0/24' });
const localNode = buildNode({ id: 1, isLocal: true, address: null });
const httpService = (overrides: Partial<HttpService>) =>
  buildHttpService({ nodeId: 1, domain: null, backendHost: LOCAL_SELF_HOST, backendPort: 3000, ...overrides });

describe('service form defaults', () => {
  it('starts an HTTP service at http, port 80, path /', () => {
    expect(getInitialHttpValues(regularNode)).toMatchObject({
      backendProto: 'http',
      backendPort: '80',
      pathLocation: '/',
    });
  });

  it('starts a TCP service at tcp, backend port 1883, no public port, no TLS', () => {
    expect(getInitialTcpValues(regularNode)).toMatchObject({ proto: 'tcp', backendPort: '1883', port: '', ssl: false });
  });

  it("shows a plain node's own address as its (fixed) backend host; gateways start empty", () => {
    expect(getInitialHttpValues(regularNode).backendHost).toBe('10.0.0.4');
    expect(getInitialHttpValues(gatewayNode).backendHost).toBe('');
  });
});

describe('which HTTP fields can be edited', () => {
  it('locks the backend host on a plain node and nothing else', () => {
    expect(getHttpFieldAccess(regularNode)).toEqual({
      isBackendHostDisabled: true,
      isPathLocationDisabled: false,
      isBackendProtoDisabled: false,
      isBackendPortDisabled: false,
    });
  });

  it('lets gateways and the local node choose the backend host', () => {
    expect(getHttpFieldAccess(gatewayNode).isBackendHostDisabled).toBe(false);
    expect(getHttpFieldAccess(localNode).isBackendHostDisabled).toBe(false);
  });

  it("locks path, protocol, port and host of the server's own service on the local node", () => {
    expect(getHttpFieldAccess(localNode, httpService({}))).toEqual({
      isBackendHostDisabled: true,
      isPathLocationDisabled: true,
      isBackendProtoDisabled: true,
      isBackendPortDisabled: true,
    });
    expect(getHttpFieldAccess(localNode, httpService({ backendHost: 'grafana' })).isPathLocationDisabled).toBe(false);
  });
});

describe('service request bodies', () => {
  it('sends backendHost only where the operator chooses it, and drops blank IP rows', () => {
    const values = { ...getInitialHttpValues(regularNode), name: 'api', allowedIps: ['10.1.0.0/16', ' '] };
    const body = toHttpBody(values, regularNode);
    expect(body).not.toHaveProperty('backendHost');
    expect(body).toMatchObject({ domain: null, allowedIps: ['10.1.0.0/16'] });
    expect(toHttpBody({ ...values, backendHost: 'db' }, gatewayNode)).toMatchObject({ backendHost: 'db' });
  });

  it('asks the server to pick a public TCP port when the field is empty', () => {
    expect(toTcpBody({ ...getInitialTcpValues(regularNode), name: 'mqtt' }, regularNode)).toMatchObject({ port: null });
  });
});

describe('service form validation', () => {
  it('accepts the defaults once a name is given', () => {
    expect(validateHttpForm({ ...getInitialHttpValues(regularNode), name: 'api' }, regularNode)).toEqual({});
    expect(validateTcpForm({ ...getInitialTcpValues(regularNode), name: 'mqtt' }, regularNode)).toEqual({});
  });

  it('reports the spec messages per field', () => {
    const errors = validateHttpForm(
      { ...getInitialHttpValues(gatewayNode), domain: 'not a domain', pathLocation: 'api', backendPort: '' },
      gatewayNode,
    );
    expect(errors).toEqual({
      name: messages.empty,
      domain: messages.domain,
      pathLocation: ruleMessages.path,
      backendPort: messages.required,
      backendHost: messages.required,
    });
  });

  it('checks each allowed IP', () => {
    const values = { ...getInitialTcpValues(regularNode), name: 'mqtt', allowedIps: ['10.0.0.0/8', 'nope'] };
    expect(validateTcpForm(values, regularNode).allowedIps).toBe(ruleMessages.ipOrCidr);
  });

  it('checks the port range', () => {
    const values = { ...getInitialTcpValues(regularNode), name: 'mqtt', port: '70000' };
    expect(validateTcpForm(values, regularNode).port).toBe(maxMessage(65535));
  });
});
