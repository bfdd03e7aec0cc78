import { z } from 'zod';
import {
  defaults,
  HttpServiceCreateSchema,
  messages,
  TcpServiceCreateSchema,
  toFieldErrors,
  type HttpService,
  type Node,
  type TcpService,
} from '@postern/contract';
import { expiryBody } from './service-expiry-rules';

// The pure part of the HTTP and TCP service forms (the spec's "Validation rules"): initial values, which fields are
// editable for which node, the request body, and validation with the contract's schemas plus the UI-only rules.

/**
 * The server's own services live on the local node and point at its loopback address. Their path, protocol and
 * port are fixed by the server, so the form locks them (the spec's "local node with host {ip}").
 */
export const LOCAL_SELF_HOST = '127.0.0.1';

export type FieldErrors = Partial<Record<string, string>>;

export type HttpFormValues = {
  name: string;
  domain: string;
  pathLocation: string;
  backendProto: 'http' | 'https';
  backendHost: string;
  backendPort: string;
  allowedIps: string[];
  blockedIps: string[];
  /** Temporary exposure: see service-expiry.tsx. */
  expiry: string;
};

export type TcpFormValues = {
  name: string;
  domain: string;
  proto: 'tcp' | 'udp';
  backendHost: string;
  backendPort: string;
  port: string;
  ssl: boolean;
  allowedIps: string[];
  blockedIps: string[];
  expiry: string;
};

/** backendHost is chosen by the operator only on gateways and the local node; a plain node serves its own host. */
export function canEditBackendHost(node: Node): boolean {
  return node.isGateway || node.isLocal;
}

export type HttpFieldAccess = {
  isBackendHostDisabled: boolean;
  isPathLocationDisabled: boolean;
  isBackendProtoDisabled: boolean;
  isBackendPortDisabled: boolean;
};

/** Decided from the stored service, not the live input, so typing the loopback address locks nothing. */
export function getHttpFieldAccess(node: Node, service?: HttpService): HttpFieldAccess {
  const isServerOwnService = node.isLocal && service?.backendHost === LOCAL_SELF_HOST;
  return {
    isBackendHostDisabled: !canEditBackendHost(node) || isServerOwnService,
    isPathLocationDisabled: isServerOwnService,
    isBackendProtoDisabled: isServerOwnService,
    isBackendPortDisabled: isServerOwnService,
  };
}

/** What the disabled host field shows on a plain node: the node's tunnel address, where its services run. */
function defaultBackendHost(node: Node): string {
  return canEditBackendHost(node) ? '' : (node.address ?? '');
}

export function getInitialHttpValues(node: Node, service?: HttpService): HttpFormValues {
  return {
    name: service?.name ?? '',
    domain: service?.domain ?? '',
    pathLocation: service?.pathLocation ?? '/',
    backendProto: service?.backendProto ?? defaults.http.backendProto,
    backendHost: service?.backendHost ?? defaultBackendHost(node),
    backendPort: String(service?.backendPort ?? defaults.http.backendPort),
    allowedIps: service?.allowedIps.slice() ?? [],
    blockedIps: service?.blockedIps.slice() ?? [],
    expiry: '',
  };
}

export function getInitialTcpValues(node: Node, service?: TcpService): TcpFormValues {
  return {
    name: service?.name ?? '',
    domain: service?.domain ?? '',
    proto: service?.proto ?? defaults.tcp.proto,
    backendHost: service?.backendHost ?? defaultBackendHost(node),
    backendPort: String(service?.backendPort ?? defaults.tcp.backendPort),
    port: service ? String(service.port) : '',
    ssl: service?.ssl ?? false,
    allowedIps: service?.allowedIps.slice() ?? [],
    blockedIps: service?.blockedIps.slice() ?? [],
    expiry: '',
  };
}

const cleanIpList = (list: readonly string[]): string[] => list.map((ip) => ip.trim()).filter((ip) => ip !== '');

/** The request body: empty texts become null, blank IP rows are dropped, backendHost only where it is editable. */
export function toHttpBody(values: HttpFormValues, node: Node): Record<string, unknown> {
  return {
    name: values.name,
    domain: values.domain.trim() === '' ? null : values.domain,
    pathLocation: values.pathLocation.trim() === '' ? null : values.pathLocation,
    backendProto: values.backendProto,
    ...(canEditBackendHost(node) ? { backendHost: values.backendHost } : {}),
    backendPort: values.backendPort,
    allowedIps: cleanIpList(values.allowedIps),
    blockedIps: cleanIpList(values.blockedIps),
    ...expiryBody(values.expiry),
  };
}

export function toTcpBody(values: TcpFormValues, node: Node): Record<string, unknown> {
  return {
    name: values.name,
    domain: values.domain.trim() === '' ? null : values.domain,
    proto: values.proto,
    // Empty: the server assigns a free public port from its range.
    port: values.port.trim() === '' ? null : values.port,
    ssl: values.ssl,
    ...(canEditBackendHost(node) ? { backendHost: values.backendHost } : {}),
    backendPort: values.backendPort,
    allowedIps: cleanIpList(values.allowedIps),
    blockedIps: cleanIpList(values.blockedIps),
    ...expiryBody(values.expiry),
  };
}

/** Rules the UI adds to the API's: the backend port is required, and so is the host where it can be edited. */
function addUiRules(
  errors: FieldErrors,
  values: { backendPort: string; backendHost: string },
  node: Node,
): FieldErrors {
  const result = { ...errors };
  if (values.backendPort.trim() === '') result.backendPort = messages.required;
  if (canEditBackendHost(node) && values.backendHost.trim() === '') result.backendHost = messages.required;
  return result;
}

function collectErrors(
  parsed: { success: true } | { success: false; error: Parameters<typeof toFieldErrors>[0] },
): FieldErrors {
  if (parsed.success) return {};
  return Object.fromEntries(toFieldErrors(parsed.error).map(({ field, message }) => [field, message]));
}

export function validateHttpForm(values: HttpFormValues, node: Node): FieldErrors {
  return addUiRules(collectErrors(HttpServiceCreateSchema.safeParse(toHttpBody(values, node))), values, node);
}

export function validateTcpForm(values: TcpFormValues, node: Node): FieldErrors {
  return addUiRules(collectErrors(TcpServiceCreateSchema.safeParse(toTcpBody(values, node))), values, node);
}

function addIssues(errors: FieldErrors, ctx: z.RefinementCtx): void {
  for (const [field, message] of Object.entries(errors)) {
    if (message) ctx.addIssue({ code: 'custom', path: [field], message });
  }
}

/** A form schema for `useZodForm`: checks the form values, outputs the parsed request body. */
export const makeHttpFormSchema = (node: Node) =>
  z
    .custom<HttpFormValues>()
    .superRefine((values, ctx) => addIssues(validateHttpForm(values, node), ctx))
    .transform((values) => HttpServiceCreateSchema.parse(toHttpBody(values, node)));

export const makeTcpFormSchema = (node: Node) =>
  z
    .custom<TcpFormValues>()
    .superRefine((values, ctx) => addIssues(validateTcpForm(values, node), ctx))
    .transform((values) => TcpServiceCreateSchema.parse(toTcpBody(values, node)));
