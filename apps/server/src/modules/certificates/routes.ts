import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { createAcmeCa, deleteAcmeCa, listAcmeCas, updateAcmeCa } from './authorities.js';
import { listCertificates, renewCertificate, uploadCertificate } from './certificates.js';
import { createDnsProvider, deleteDnsProvider, listDnsProviders, updateDnsProvider } from './dns-providers.js';

export async function certificateRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  registerOperation(app, operations.listDnsProviders, async () => await listDnsProviders(deps));
  registerOperation(app, operations.createDnsProvider, async (request) => await createDnsProvider(deps, request.body));
  registerOperation(
    app,
    operations.updateDnsProvider,
    async (request) => await updateDnsProvider(deps, request.params.id, request.body),
  );
  registerOperation(app, operations.deleteDnsProvider, async (request) => {
    await deleteDnsProvider(deps, request.params.id);
  });
  registerOperation(app, operations.listAcmeCas, async () => await listAcmeCas(deps));
  registerOperation(app, operations.createAcmeCa, async (request) => await createAcmeCa(deps, request.body));
  registerOperation(
    app,
    operations.updateAcmeCa,
    async (request) => await updateAcmeCa(deps, request.params.id, request.body),
  );
  registerOperation(app, operations.deleteAcmeCa, async (request) => {
    await deleteAcmeCa(deps, request.params.id);
  });
  registerOperation(app, operations.listCertificates, async () => await listCertificates(deps));
  registerOperation(
    app,
    operations.renewCertificate,
    async (request) => await renewCertificate(deps, request.params.id),
  );
  // A PEM chain with intermediates is a few KiB; the route takes up to 96 KiB (the field limits are 64 + 16 KiB).
  registerOperation(
    app,
    operations.uploadCertificate,
    async (request) => await uploadCertificate(deps, request.params.id, request.body),
    { bodyLimit: 96 * 1024 },
  );
}
