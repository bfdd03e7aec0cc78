import { eq } from 'drizzle-orm';
import { NOTIFICATION_DEFAULTS, type NotificationSettings, type NotificationSettingsUpdate } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { settings } from '../../db/schema.js';

// The settings every channel shares (docs/api.md "Notifications"): the grace period and the certificate warning,
// one row of the `settings` table (JSON), so every gateway on the database reads the same.

const KEY = 'notifications';

export async function readNotificationSettings(db: ReadDb): Promise<NotificationSettings> {
  const row = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, KEY)).get();
  const stored = row ? (JSON.parse(row.value) as Partial<NotificationSettings>) : {};
  return { ...NOTIFICATION_DEFAULTS, ...stored };
}

export async function updateNotificationSettings(
  deps: Pick<AppDeps, 'db'>,
  body: NotificationSettingsUpdate,
): Promise<NotificationSettings> {
  return await deps.db.write(async (tx) => {
    const current = await readNotificationSettings(tx);
    const next: NotificationSettings = {
      graceSeconds: body.graceSeconds ?? current.graceSeconds,
      certificateExpiringDays: body.certificateExpiringDays ?? current.certificateExpiringDays,
    };
    const value = JSON.stringify(next);
    await tx
      .insert(settings)
      .values({ key: KEY, value })
      .onConflictDoUpdate({ target: settings.key, set: { value } })
      .run();
    return next;
  });
}
