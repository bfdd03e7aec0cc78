import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { consolePublicUrl, readConsoleCertificate, type ConsoleCertificate } from './console-certificate.js';
import { buildOpenApiDocument } from './openapi.js';

export async function systemRoutes(
  app: FastifyInstance,
  opts: { deps: AppDeps; version: string; isNodeClientServed: boolean },
): Promise<void> {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;

  registerOperation(app, operations.health, () => ({ status: 'ok' as const, version: opts.version }));

  // Built on first request; the document is plain JSON, not a contract entity.
  registerOperation(app, operations.openapi, () => {
    document ??= buildOpenApiDocument(opts.version);
    return document;
  });

  // Behind the session gate like every /api route: what the console prints in its connect command.
  registerOperation(app, operations.systemInfo, async (request) => {
    let certificate: ConsoleCertificate | null = null;
    try {
      certificate = await readConsoleCertificate(opts.deps.config.dataDir);
    } catch (error) {
      // The URL is still right without a pin; the CLI then says how to pin when verification fails.
      request.log.warn({ err: error }, 'cannot read the console certificate');
    }
    const registry = opts.deps.config.releaseRegistry;
    return {
      publicUrl: consolePublicUrl(opts.deps.config),
      certificate,
      // The release workflow publishes the node image and chart under the gateway's own version.
      nodeInstall: {
        script: opts.isNodeClientServed,
        image: `${registry}/node:${opts.version}`,
        chart: `oci://${registry}/charts/postern-node`,
        chartVersion: opts.version,
      },
    };
  });
}
