import {
  NOTIFICATION_CHANNEL_KINDS,
  NOTIFICATION_EVENTS,
  operations,
  type NotificationChannel,
  type NotificationChannelKind,
  type NotificationEvent,
  type NotificationTestResult,
} from '@postern/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { SubmitEvent } from 'react';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { CheckboxField, SelectField, TextField } from '../../components/ui/form-field';
import { formatDateTime } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';
import { call, isApiError } from '../../lib/api';
import { showToast } from '../../lib/toast-store';

// Settings → Notifications (beyond the console spec; docs/api.md "Notifications"): the channels the gateway tells the
// operator through, their switches, "send test", an edit form, the recent deliveries, and the grace period. Its own
// chunk (settings-page.tsx loads it lazily), so the first page's JavaScript does not grow. Secrets are write-only: the
// form never shows a stored one; an edit says one is stored and offers to replace it, as the DNS provider form does.

const channelsKey = ['notifications', 'channels'] as const;
const settingsKey = ['notifications', 'settings'] as const;
const deliveriesKey = ['notifications', 'deliveries'] as const;

// Product names stay as they are; the two generic kinds are words of the active language.
const kindLabel = (kind: NotificationChannelKind): string => {
  if (kind === 'webhook') return t('settings.notify.kind.webhook');
  if (kind === 'email') return t('settings.notify.kind.email');
  return { slack: 'Slack', discord: 'Discord', mattermost: 'Mattermost', ntfy: 'ntfy' }[kind];
};

/** The switches' words (the contract's `notificationEventLabels` in English). */
const eventLabelIds: Record<NotificationEvent, MessageId> = {
  node: 'settings.notify.event.node',
  backend: 'settings.notify.event.backend',
  'certificate-failed': 'settings.notify.event.certificate-failed',
  'certificate-expiring': 'settings.notify.event.certificate-expiring',
  drift: 'settings.notify.event.drift',
  'set-aside': 'settings.notify.event.set-aside',
  gateway: 'settings.notify.event.gateway',
  'new-sign-in-address': 'settings.notify.event.new-sign-in-address',
  'two-factor-disabled': 'settings.notify.event.two-factor-disabled',
};

type Draft = {
  kind: NotificationChannelKind;
  name: string;
  url: string;
  signingSecret: string;
  token: string;
  host: string;
  port: string;
  security: 'starttls' | 'tls';
  username: string;
  password: string;
  from: string;
  to: string;
  events: NotificationEvent[];
};

const emptyDraft: Draft = {
  kind: 'webhook',
  name: '',
  url: '',
  signingSecret: '',
  token: '',
  host: '',
  port: '',
  security: 'starttls',
  username: '',
  password: '',
  from: '',
  to: '',
  events: [...NOTIFICATION_EVENTS],
};

/** The request body of a draft: only the fields its kind takes, blanks left out. */
function bodyOf(draft: Draft) {
  const text = (value: string) => (value.trim() === '' ? undefined : value.trim());
  const common = { kind: draft.kind, name: draft.name.trim(), events: draft.events };
  if (draft.kind === 'email')
    return {
      ...common,
      host: text(draft.host),
      port: text(draft.port) === undefined ? undefined : Number(draft.port),
      security: draft.security,
      username: text(draft.username),
      password: draft.password === '' ? undefined : draft.password,
      from: text(draft.from),
      to: draft.to
        .split(/[\s,]+/)
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    };
  return {
    ...common,
    url: text(draft.url),
    ...(draft.kind === 'webhook' ? { signingSecret: text(draft.signingSecret) } : {}),
    ...(draft.kind === 'ntfy' ? { token: text(draft.token) } : {}),
  };
}

/** A channel as the edit form starts: what is not secret; the secrets stay empty until replaced. */
function draftOf(channel: NotificationChannel): Draft {
  const email = channel.email;
  return {
    ...emptyDraft,
    kind: channel.kind,
    name: channel.name,
    events: channel.events,
    host: email?.host ?? '',
    port: email ? String(email.port) : '',
    security: email?.security ?? 'starttls',
    username: email?.username ?? '',
    from: email?.from ?? '',
    to: email?.to.join(', ') ?? '',
  };
}

type SecretField = 'url' | 'signingSecret' | 'token' | 'password';

/**
 * The edit's body: the settings as shown, and a secret only when the operator chose to replace it (an optional one
 * replaced by nothing is removed: null; the others left empty are kept).
 */
function updateOf(draft: Draft, replacing: ReadonlySet<SecretField>) {
  const text = (value: string) => (value.trim() === '' ? undefined : value.trim());
  const { kind: _kind, ...created } = bodyOf(draft);
  const body: Record<string, unknown> = { name: created.name, events: created.events };
  if (draft.kind === 'email') {
    Object.assign(body, created, { username: text(draft.username) ?? null });
    delete body.password;
    if (replacing.has('password')) body.password = draft.password === '' ? null : draft.password;
    return body;
  }
  if (replacing.has('url')) body.url = text(draft.url);
  if (draft.kind === 'webhook' && replacing.has('signingSecret')) body.signingSecret = text(draft.signingSecret);
  if (draft.kind === 'ntfy' && replacing.has('token')) body.token = text(draft.token) ?? null;
  return body;
}

function reportTest(result: NotificationTestResult): void {
  showToast({ message: result.message, type: result.ok ? 'success' : 'error' });
}

export function NotificationsCard() {
  const queryClient = useQueryClient();
  const channels = useQuery({
    queryKey: channelsKey,
    queryFn: ({ signal }) => call(operations.listNotificationChannels, { query: { page: 1, limit: 100 }, signal }),
  });
  /** The form open: a new channel, or the id of the channel edited. */
  const [editing, setEditing] = useState<'new' | number | null>(null);
  // The channels and the deliveries (a delete takes its channel's deliveries along).
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['notifications'] });
  const test = useMutation({
    mutationFn: (id: number) => call(operations.testNotificationChannel, { params: { id }, body: {} }),
    onSuccess: reportTest,
  });
  const toggle = useMutation({
    mutationFn: (channel: NotificationChannel) =>
      call(operations.updateNotificationChannel, { params: { id: channel.id }, body: { enabled: !channel.enabled } }),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: number) => call(operations.deleteNotificationChannel, { params: { id } }),
    onSettled: refresh,
  });
  const edited =
    typeof editing === 'number' ? channels.data?.data.find((channel) => channel.id === editing) : undefined;

  let body;
  if (channels.isPending) body = <p className="px-4 py-6 text-sm text-gray-500">{t('ui.loadingEllipsis')}</p>;
  else if (channels.isError)
    body = <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">{t('settings.notify.loadError')}</p>;
  else if (channels.data.total === 0 && editing === null)
    body = <p className="px-4 py-6 text-sm text-gray-600 dark:text-gray-300">{t('settings.notify.empty')}</p>;
  else
    body = (
      <ul className="divide-y divide-gray-200 dark:divide-gray-800">
        {channels.data.data.map((channel) => (
          <li key={channel.id} className="flex flex-wrap items-center gap-3 px-4 py-3 text-sm">
            <span className="font-medium">{channel.name}</span>
            <Badge tone="blue">{kindLabel(channel.kind)}</Badge>
            <span className="text-gray-600 dark:text-gray-300">{channel.target}</span>
            {!channel.enabled && <Badge>{t('settings.off')}</Badge>}
            {channel.pending > 0 && (
              <Badge tone="yellow">{t('settings.notify.waiting', { count: channel.pending })}</Badge>
            )}
            {channel.lastAttempt && !channel.lastAttempt.ok && (
              <Badge tone="red">{t('settings.notify.lastFailed', { error: channel.lastAttempt.error ?? '' })}</Badge>
            )}
            <span className="ml-auto flex flex-wrap gap-2">
              <Button
                variant="secondary"
                isLoading={test.isPending && test.variables === channel.id}
                onClick={() => test.mutate(channel.id)}
                aria-label={t('settings.notify.sendTestTo', { name: channel.name })}
              >
                {t('settings.notify.sendTest')}
              </Button>
              <Button
                variant="secondary"
                onClick={() => setEditing(channel.id)}
                aria-label={t('settings.notify.editName', { name: channel.name })}
              >
                {t('settings.list.edit')}
              </Button>
              <Button variant="secondary" onClick={() => toggle.mutate(channel)}>
                {t(channel.enabled ? 'settings.notify.turnOff' : 'settings.notify.turnOn')}
              </Button>
              <Button
                variant="danger"
                onClick={() => remove.mutate(channel.id)}
                aria-label={t('settings.notify.deleteName', { name: channel.name })}
              >
                {t('settings.list.delete')}
              </Button>
            </span>
          </li>
        ))}
      </ul>
    );

  const done = () => {
    setEditing(null);
    void refresh();
  };
  return (
    <Card
      title={t('settings.notify.title')}
      actions={
        editing === null && (
          <Button variant="secondary" onClick={() => setEditing('new')}>
            {t('settings.notify.add')}
          </Button>
        )
      }
    >
      {body}
      {editing === 'new' && <ChannelForm onDone={done} />}
      {edited && <ChannelForm key={edited.id} channel={edited} onDone={done} />}
      <DeliveriesList />
      <GraceForm />
    </Card>
  );
}

const statusTones = { pending: 'yellow', sent: 'green', failed: 'red' } as const;
const statusLabels = {
  pending: 'settings.notify.status.pending',
  sent: 'settings.notify.status.sent',
  failed: 'settings.notify.status.failed',
} as const satisfies Record<string, MessageId>;

/** The recent deliveries, newest first: what was sent where, and what is still retried and why (no secrets). */
function DeliveriesList() {
  const deliveries = useQuery({
    queryKey: deliveriesKey,
    queryFn: ({ signal }) => call(operations.listNotificationDeliveries, { query: { page: 1, limit: 10 }, signal }),
  });
  if (!deliveries.data || deliveries.data.total === 0) return null;
  return (
    <section aria-labelledby="notification-deliveries" className="border-t border-gray-200 dark:border-gray-800">
      <h3 id="notification-deliveries" className="px-4 pt-4 text-sm font-medium">
        {t('settings.notify.recent')}
      </h3>
      <ul className="divide-y divide-gray-200 text-sm dark:divide-gray-800">
        {deliveries.data.data.map((delivery) => (
          <li key={delivery.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-4 py-2">
            <Badge tone={statusTones[delivery.status]}>{t(statusLabels[delivery.status])}</Badge>
            <span className="font-medium">{delivery.title}</span>
            <span className="text-gray-600 dark:text-gray-300">
              {delivery.status === 'pending' && delivery.nextAttemptAt
                ? t('settings.notify.deliveryNext', {
                    channel: delivery.channelName,
                    when: formatDateTime(delivery.created_at),
                    attempts: delivery.attempts,
                    next: formatDateTime(delivery.nextAttemptAt),
                  })
                : t('settings.notify.delivery', {
                    channel: delivery.channelName,
                    when: formatDateTime(delivery.created_at),
                    attempts: delivery.attempts,
                  })}
            </span>
            {delivery.lastError && delivery.status !== 'sent' && (
              <span className="w-full text-red-700 dark:text-red-300">{delivery.lastError}</span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A stored secret in an edit: said to be there (or not), never shown, replaced on request. */
function StoredSecret({
  label,
  state,
  replaceLabel,
  onReplace,
}: {
  label: string;
  state: string;
  replaceLabel: string;
  onReplace: () => void;
}) {
  return (
    <div className="flex flex-wrap items-center gap-3 text-sm">
      <span>{t('settings.notify.secretState', { label, state })}</span>
      <Button variant="secondary" onClick={onReplace}>
        {replaceLabel}
      </Button>
    </div>
  );
}

/** Adds a channel, or with `channel` edits it (the kind stays; secrets stay unless replaced). */
function ChannelForm({ channel, onDone }: { channel?: NotificationChannel; onDone: () => void }) {
  const isEdit = channel !== undefined;
  const [draft, setDraft] = useState<Draft>(() => (channel ? draftOf(channel) : emptyDraft));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [replacing, setReplacing] = useState<ReadonlySet<SecretField>>(new Set());
  const isShown = (secret: SecretField) => !isEdit || replacing.has(secret);
  const replace = (secret: SecretField) => setReplacing((current) => new Set([...current, secret]));
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));
  const failed = (error: unknown) => {
    if (isApiError(error) && error.status === 422)
      setErrors(Object.fromEntries(error.fieldErrors.map((entry) => [entry.field, entry.message])));
  };
  const save = useMutation({
    mutationFn: async () => {
      if (channel)
        await call(operations.updateNotificationChannel, {
          params: { id: channel.id },
          body: updateOf(draft, replacing),
        });
      else await call(operations.createNotificationChannel, { body: bodyOf(draft) });
    },
    onSuccess: () => {
      showToast({ message: t(isEdit ? 'settings.notify.saved' : 'settings.notify.added'), type: 'success' });
      onDone();
    },
    onError: failed,
  });
  const test = useMutation({
    // An edit's test goes with the unsaved changes, the stored secrets filling in the rest.
    mutationFn: () =>
      channel
        ? call(operations.testNotificationChannel, { params: { id: channel.id }, body: updateOf(draft, replacing) })
        : call(operations.testNewNotificationChannel, { body: bodyOf(draft) }),
    onSuccess: (result) => {
      setErrors({});
      reportTest(result);
    },
    onError: failed,
  });
  const submit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate();
  };
  const field = (key: Exclude<keyof Draft, 'events' | 'kind' | 'security'>) => ({
    name: key,
    value: draft[key],
    onChange: (value: string) => setDraft((d) => ({ ...d, [key]: value })),
    error: errors[key],
  });
  return (
    <form
      onSubmit={submit}
      aria-label={channel ? t('settings.notify.editName', { name: channel.name }) : t('settings.notify.newChannel')}
      className="flex flex-col gap-3 border-t border-gray-200 px-4 py-4 dark:border-gray-800"
    >
      <SelectField
        name="kind"
        label={t('settings.notify.kind')}
        value={draft.kind}
        disabled={isEdit}
        description={isEdit ? t('settings.notify.kindStays') : undefined}
        onChange={(value) => set('kind')(value as NotificationChannelKind)}
        options={NOTIFICATION_CHANNEL_KINDS.map((kind) => ({ value: kind, label: kindLabel(kind) }))}
      />
      <TextField label={t('settings.notify.name')} required {...field('name')} />
      <KindFields
        draft={draft}
        channel={channel}
        field={field}
        onSecurity={set('security')}
        isShown={isShown}
        replace={replace}
      />
      <fieldset className="flex flex-col gap-1">
        <legend className="mb-1 text-sm font-medium">{t('settings.notify.tellMeWhen')}</legend>
        {NOTIFICATION_EVENTS.map((event) => (
          <CheckboxField
            key={event}
            name={`event-${event}`}
            label={t(eventLabelIds[event])}
            value={draft.events.includes(event)}
            onChange={(isOn) =>
              set('events')(isOn ? [...draft.events, event] : draft.events.filter((entry) => entry !== event))
            }
          />
        ))}
      </fieldset>
      <div className="flex flex-wrap gap-2">
        <Button type="submit" isLoading={save.isPending}>
          {t('settings.notify.saveChannel')}
        </Button>
        <Button variant="secondary" isLoading={test.isPending} onClick={() => test.mutate()}>
          {t('settings.notify.sendTest')}
        </Button>
        <Button variant="ghost" onClick={onDone}>
          {t('ui.cancel')}
        </Button>
      </div>
    </form>
  );
}

type FieldProps = { name: string; value: string; onChange: (value: string) => void; error: string | undefined };

/** The fields of the channel's kind: SMTP settings, or the URL and its secrets (stored ones behind "Replace …"). */
function KindFields({
  draft,
  channel,
  field,
  onSecurity,
  isShown,
  replace,
}: {
  draft: Draft;
  channel: NotificationChannel | undefined;
  field: (key: Exclude<keyof Draft, 'events' | 'kind' | 'security'>) => FieldProps;
  onSecurity: (value: Draft['security']) => void;
  isShown: (secret: SecretField) => boolean;
  replace: (secret: SecretField) => void;
}) {
  const isEdit = channel !== undefined;
  const replacesOrRemoves = isEdit ? t('settings.notify.replacesOrRemoves') : undefined;
  return draft.kind === 'email' ? (
    <>
      <TextField label={t('settings.notify.smtpServer')} required placeholder="smtp.example.com" {...field('host')} />
      <TextField
        label={t('settings.notify.port')}
        inputMode="numeric"
        placeholder={draft.security === 'tls' ? '465' : '587'}
        {...field('port')}
      />
      <SelectField
        name="security"
        label={t('settings.notify.security')}
        value={draft.security}
        onChange={(value) => onSecurity(value as Draft['security'])}
        options={[
          { value: 'starttls', label: t('settings.notify.starttls') },
          { value: 'tls', label: 'TLS' },
        ]}
      />
      <TextField label={t('login.username')} autoComplete="off" {...field('username')} />
      {isShown('password') ? (
        <TextField
          label={t('login.password')}
          type="password"
          autoComplete="new-password"
          description={replacesOrRemoves}
          {...field('password')}
        />
      ) : (
        <StoredSecret
          label={t('login.password')}
          state={t(channel?.hasPassword ? 'settings.notify.stored' : 'settings.notify.noneStored')}
          replaceLabel={t('settings.notify.replace.password')}
          onReplace={() => replace('password')}
        />
      )}
      <TextField label={t('settings.notify.from')} required placeholder="gateway@example.com" {...field('from')} />
      <TextField label={t('settings.notify.to')} required description={t('settings.notify.toHint')} {...field('to')} />
    </>
  ) : (
    <>
      {isShown('url') ? (
        <TextField
          label="URL"
          required
          type="url"
          autoComplete="off"
          description={t(isEdit ? 'settings.notify.urlHintEdit' : 'settings.notify.urlHint')}
          {...field('url')}
        />
      ) : (
        <StoredSecret
          label="URL"
          state={t('settings.notify.urlStored', { target: channel?.target ?? '' })}
          replaceLabel={t('settings.notify.replace.url')}
          onReplace={() => replace('url')}
        />
      )}
      {draft.kind === 'webhook' &&
        (isShown('signingSecret') ? (
          <TextField
            label={t('settings.notify.signingSecret')}
            required={!isEdit}
            type="password"
            autoComplete="new-password"
            description={t(isEdit ? 'settings.notify.signingHintEdit' : 'settings.notify.signingHint')}
            {...field('signingSecret')}
          />
        ) : (
          <StoredSecret
            label={t('settings.notify.signingSecret')}
            state={t('settings.notify.stored')}
            replaceLabel={t('settings.notify.replace.signingSecret')}
            onReplace={() => replace('signingSecret')}
          />
        ))}
      {draft.kind === 'ntfy' &&
        (isShown('token') ? (
          <TextField
            label={t('settings.notify.accessToken')}
            type="password"
            autoComplete="off"
            description={replacesOrRemoves}
            {...field('token')}
          />
        ) : (
          <StoredSecret
            label={t('settings.notify.accessToken')}
            state={t(channel?.hasToken ? 'settings.notify.stored' : 'settings.notify.noneStored')}
            replaceLabel={t('settings.notify.replace.token')}
            onReplace={() => replace('token')}
          />
        ))}
    </>
  );
}

function GraceForm() {
  const queryClient = useQueryClient();
  const settings = useQuery({
    queryKey: settingsKey,
    queryFn: ({ signal }) => call(operations.getNotificationSettings, { signal }),
  });
  const [grace, setGrace] = useState<string | null>(null);
  const [days, setDays] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: () =>
      call(operations.updateNotificationSettings, {
        body: {
          ...(grace === null ? {} : { graceSeconds: Number(grace) }),
          ...(days === null ? {} : { certificateExpiringDays: Number(days) }),
        },
      }),
    onSuccess: () => {
      showToast({ message: t('settings.notify.settingsSaved'), type: 'success' });
      void queryClient.invalidateQueries({ queryKey: settingsKey });
    },
  });
  if (!settings.data) return null;
  return (
    <form
      className="flex flex-wrap items-end gap-3 border-t border-gray-200 px-4 py-4 dark:border-gray-800"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <TextField
        name="graceSeconds"
        label={t('settings.notify.grace')}
        inputMode="numeric"
        description={t('settings.notify.graceHint')}
        value={grace ?? settings.data.graceSeconds}
        onChange={setGrace}
      />
      <TextField
        name="certificateExpiringDays"
        label={t('settings.notify.certificateDays')}
        inputMode="numeric"
        value={days ?? settings.data.certificateExpiringDays}
        onChange={setDays}
      />
      <Button type="submit" variant="secondary" isLoading={save.isPending}>
        {t('ui.save')}
      </Button>
    </form>
  );
}
