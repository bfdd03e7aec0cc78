import type { OperationName } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { getChannel } from '../notifications/channels.js';

// Notification channels and settings in the audit log (docs/api.md "Notifications"), recorded like every other API
// change by operation-audit.ts; this file names their actions and loads a channel's view (which holds no secret).

export const NOTIFICATION_CHANNEL = 'notification-channel';

export const notificationAudited: Partial<
  Record<OperationName, { action: string; kind: 'notification-channel' | 'none' }>
> = {
  createNotificationChannel: { action: 'notification.channel-create', kind: 'notification-channel' },
  updateNotificationChannel: { action: 'notification.channel-update', kind: 'notification-channel' },
  deleteNotificationChannel: { action: 'notification.channel-delete', kind: 'notification-channel' },
  updateNotificationSettings: { action: 'notification.settings-update', kind: 'none' },
};

export async function loadNotificationChannel(
  deps: AppDeps,
  id: number,
): Promise<{ view: Record<string, unknown>; name: string; nodeId: null; domain: null } | null> {
  try {
    const { created_at: _c, updated_at: _u, pending: _p, lastAttempt: _l, ...view } = await getChannel(deps, id);
    return { view, name: view.name, nodeId: null, domain: null };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return null;
    throw error;
  }
}
