import {
  NOTIFICATION_CHANNEL_KINDS,
  NOTIFICATION_EVENTS,
  notificationEventLabels,
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
import { call, isApiError } from '../../lib/api';
import { showToast } from '../../lib/toast-store';

// Settings → Notifications (beyond the console spec; docs/api.md "Notifications"): the channels the gateway tells the
// operator through, their switches, "send test", and the grace period. Its own chunk (settings-page.tsx loads it
// lazily), so the first page's JavaScript does not grow. Secrets are write-only: the form never shows a stored one.

const channelsKey = ['notifications', 'channels'] as const;
const settingsKey = ['notifications', 'settings'] as const;

const kindLabels: Record<NotificationChannelKind, string> = {
  webhook: 'Webhook (signed JSON)',
  slack: 'Slack',
  discord: 'Discord',
  mattermost: 'Mattermost',
  ntfy: 'ntfy',
  email: 'E-mail (SMTP)',
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

function reportTest(result: NotificationTestResult): void {
  showToast({ message: result.message, type: result.ok ? 'success' : 'error' });
}

export function NotificationsCard() {
  const queryClient = useQueryClient();
  const channels = useQuery({
    queryKey: channelsKey,
    queryFn: ({ signal }) => call(operations.listNotificationChannels, { query: { page: 1, limit: 100 }, signal }),
  });
  const [isAdding, setAdding] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: channelsKey });
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

  let body;
  if (channels.isPending) body = <p className="px-4 py-6 text-sm text-gray-500">Loading…</p>;
  else if (channels.isError)
    body = <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">Could not load the channels.</p>;
  else if (channels.data.total === 0 && !isAdding)
    body = (
      <p className="px-4 py-6 text-sm text-gray-600 dark:text-gray-300">
        No channel yet: add a webhook, Slack, Discord, Mattermost, ntfy or e-mail channel to hear when a node goes
        offline, a backend goes down, a certificate fails or expires, and more.
      </p>
    );
  else
    body = (
      <ul className="divide-y divide-gray-200 dark:divide-gray-800">
        {channels.data.data.map((channel) => (
          <li key={channel.id} className="flex flex-wrap items-center gap-3 px-4 py-3 text-sm">
            <span className="font-medium">{channel.name}</span>
            <Badge tone="blue">{kindLabels[channel.kind]}</Badge>
            <span className="text-gray-500">{channel.target}</span>
            {!channel.enabled && <Badge>Off</Badge>}
            {channel.pending > 0 && <Badge tone="yellow">{channel.pending} waiting</Badge>}
            {channel.lastAttempt && !channel.lastAttempt.ok && (
              <Badge tone="red">Last delivery failed: {channel.lastAttempt.error}</Badge>
            )}
            <span className="ml-auto flex gap-2">
              <Button
                variant="secondary"
                isLoading={test.isPending && test.variables === channel.id}
                onClick={() => test.mutate(channel.id)}
              >
                Send Test
              </Button>
              <Button variant="secondary" onClick={() => toggle.mutate(channel)}>
                {channel.enabled ? 'Turn Off' : 'Turn On'}
              </Button>
              <Button variant="danger" onClick={() => remove.mutate(channel.id)} aria-label={`Delete ${channel.name}`}>
                Delete
              </Button>
            </span>
          </li>
        ))}
      </ul>
    );

  return (
    <Card
      title="Notifications"
      actions={
        !isAdding && (
          <Button variant="secondary" onClick={() => setAdding(true)}>
            Add Channel
          </Button>
        )
      }
    >
      {body}
      {isAdding && (
        <ChannelForm
          onDone={() => {
            setAdding(false);
            void refresh();
          }}
        />
      )}
      <GraceForm />
    </Card>
  );
}

function ChannelForm({ onDone }: { onDone: () => void }) {
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));
  const failed = (error: unknown) => {
    if (isApiError(error) && error.status === 422)
      setErrors(Object.fromEntries(error.fieldErrors.map((entry) => [entry.field, entry.message])));
  };
  const create = useMutation({
    mutationFn: () => call(operations.createNotificationChannel, { body: bodyOf(draft) }),
    onSuccess: onDone,
    onError: failed,
  });
  const test = useMutation({
    mutationFn: () => call(operations.testNewNotificationChannel, { body: bodyOf(draft) }),
    onSuccess: (result) => {
      setErrors({});
      reportTest(result);
    },
    onError: failed,
  });
  const submit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    create.mutate();
  };
  const field = (key: Exclude<keyof Draft, 'events' | 'kind' | 'security'>) => ({
    name: key,
    value: draft[key],
    onChange: (value: string) => setDraft((d) => ({ ...d, [key]: value })),
    error: errors[key],
  });

  return (
    <form onSubmit={submit} className="flex flex-col gap-3 border-t border-gray-200 px-4 py-4 dark:border-gray-800">
      <SelectField
        name="kind"
        label="Kind"
        value={draft.kind}
        onChange={(value) => set('kind')(value as NotificationChannelKind)}
        options={NOTIFICATION_CHANNEL_KINDS.map((kind) => ({ value: kind, label: kindLabels[kind] }))}
      />
      <TextField label="Name" required {...field('name')} />
      {draft.kind === 'email' ? (
        <>
          <TextField label="SMTP server" required placeholder="smtp.example.com" {...field('host')} />
          <TextField
            label="Port"
            inputMode="numeric"
            placeholder={draft.security === 'tls' ? '465' : '587'}
            {...field('port')}
          />
          <SelectField
            name="security"
            label="Security"
            value={draft.security}
            onChange={(value) => set('security')(value as Draft['security'])}
            options={[
              { value: 'starttls', label: 'STARTTLS (required)' },
              { value: 'tls', label: 'TLS' },
            ]}
          />
          <TextField label="Username" autoComplete="off" {...field('username')} />
          <TextField label="Password" type="password" autoComplete="new-password" {...field('password')} />
          <TextField label="From" required placeholder="gateway@example.com" {...field('from')} />
          <TextField label="To" required description="One or more addresses, separated by commas" {...field('to')} />
        </>
      ) : (
        <>
          <TextField
            label="URL"
            required
            type="url"
            autoComplete="off"
            description="Stored encrypted and never shown again: an incoming webhook's URL is its credential"
            {...field('url')}
          />
          {draft.kind === 'webhook' && (
            <TextField
              label="Signing secret"
              required
              type="password"
              autoComplete="new-password"
              description="16 or more characters; the receiver checks X-Postern-Signature with it (docs/api.md)"
              {...field('signingSecret')}
            />
          )}
          {draft.kind === 'ntfy' && (
            <TextField label="Access token" type="password" autoComplete="off" {...field('token')} />
          )}
        </>
      )}
      <fieldset className="flex flex-col gap-1">
        <legend className="mb-1 text-sm font-medium">Tell me when</legend>
        {NOTIFICATION_EVENTS.map((event) => (
          <CheckboxField
            key={event}
            name={`event-${event}`}
            label={notificationEventLabels[event]}
            value={draft.events.includes(event)}
            onChange={(isOn) =>
              set('events')(isOn ? [...draft.events, event] : draft.events.filter((entry) => entry !== event))
            }
          />
        ))}
      </fieldset>
      <div className="flex gap-2">
        <Button type="submit" isLoading={create.isPending}>
          Save Channel
        </Button>
        <Button variant="secondary" isLoading={test.isPending} onClick={() => test.mutate()}>
          Send Test
        </Button>
        <Button variant="ghost" onClick={onDone}>
          Cancel
        </Button>
      </div>
    </form>
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
      showToast({ message: 'Notification settings saved', type: 'success' });
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
        label="Grace period (seconds)"
        inputMode="numeric"
        description="How long something must stay down, or up again, before it is news"
        value={grace ?? settings.data.graceSeconds}
        onChange={setGrace}
      />
      <TextField
        name="certificateExpiringDays"
        label="Certificate warning (days)"
        inputMode="numeric"
        value={days ?? settings.data.certificateExpiringDays}
        onChange={setDays}
      />
      <Button type="submit" variant="secondary" isLoading={save.isPending}>
        Save
      </Button>
    </form>
  );
}
