import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { createChannel, deleteChannel, draftConfig, listChannels, updateChannel } from './channels.js';
import type { Notifier } from './notifier.js';
import { listDeliveries } from './queue.js';
import { readNotificationSettings, updateNotificationSettings } from './settings.js';

// Notifications (docs/api.md "Notifications"): admin-session operations of the contract's table like every other,
// so the role matrix and the audit log cover them. No agent (node token) operation reaches a channel.

export async function notificationRoutes(
  app: FastifyInstance,
  opts: { deps: AppDeps; notifier: Notifier },
): Promise<void> {
  const { deps, notifier } = opts;
  registerOperation(app, operations.listNotificationChannels, async ({ query }) => await listChannels(deps, query));
  registerOperation(app, operations.createNotificationChannel, async ({ body }) => await createChannel(deps, body));
  registerOperation(
    app,
    operations.testNewNotificationChannel,
    async ({ body }) => await notifier.sendTest(await draftConfig(deps, null, body)),
  );
  registerOperation(
    app,
    operations.updateNotificationChannel,
    async ({ params, body }) => await updateChannel(deps, params.id, body),
  );
  registerOperation(
    app,
    operations.deleteNotificationChannel,
    async ({ params }) => await deleteChannel(deps, params.id),
  );
  registerOperation(
    app,
    operations.testNotificationChannel,
    async ({ params, body }) => await notifier.sendTest(await draftConfig(deps, params.id, body)),
  );
  registerOperation(app, operations.getNotificationSettings, async () => await readNotificationSettings(deps.db));
  registerOperation(
    app,
    operations.updateNotificationSettings,
    async ({ body }) => await updateNotificationSettings(deps, body),
  );
  registerOperation(
    app,
    operations.listNotificationDeliveries,
    async ({ query }) => await listDeliveries(deps.db, query),
  );
}
