import type { HttpService, TcpService } from '@postern/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { SelectField } from '../../components/ui/form-field';
import { serviceKeys } from '../../queries/services';
import { formatDateTime } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';
import { DURATIONS, formatRemaining, type ExpiryChoice, type TimeUnit } from './service-expiry-rules';

// Temporary exposure (beyond the spec): the form's "Expose For" choice and the remaining time on a service row.

type ExpiryFieldProps = {
  service: HttpService | TcpService | undefined;
  value: ExpiryChoice;
  onChange: (value: ExpiryChoice) => void;
};

/** A duration offered in the form ('3600'): `1 hour`, `8 hours`, `1 day`, `7 days`. */
function durationLabel(seconds: string): string {
  const value = Number(seconds);
  return value % 86_400 === 0
    ? t('services.expiry.days', { count: value / 86_400 })
    : t('services.expiry.hours', { count: value / 3600 });
}

const UNIT_TEXTS: Record<TimeUnit, MessageId> = {
  d: 'services.expiry.unit.d',
  h: 'services.expiry.unit.h',
  m: 'services.expiry.unit.m',
  s: 'services.expiry.unit.s',
};

/** The time left in the operator's language: `59m 59s`, `59 Min. 59 Sek.`, `59分59秒`. */
const remaining = (ms: number): string =>
  formatRemaining(
    ms,
    (amount, unit) => t(UNIT_TEXTS[unit], { amount }),
    (first, second) => t('services.expiry.twoUnits', { first, second }),
  );

export function ExpiryField({ service, value, onChange }: ExpiryFieldProps) {
  const current = service?.expiresAt;
  const durations = DURATIONS.map((seconds) => ({ value: seconds, label: durationLabel(seconds) }));
  const options = service
    ? [
        {
          value: '',
          label: current
            ? t('services.expiry.keepUntil', { date: formatDateTime(current) })
            : t('services.expiry.keepNone'),
        },
        { value: 'none', label: t('services.expiry.none') },
        ...durations,
      ]
    : [{ value: '', label: t('services.expiry.none') }, ...durations];
  return (
    <SelectField
      label={t('services.expiry.label')}
      name="expiry"
      description={t('services.expiry.hint')}
      options={options}
      value={value}
      onChange={onChange}
    />
  );
}

/** Re-renders every `intervalMs`, for countdowns. */
function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/**
 * "Expires in 59m 58s" under a service's name; once the time is up the lists are refetched until the gateway's
 * sweep (every second) shows the service disabled.
 */
export function ExpiryNote({ service }: { service: HttpService | TcpService }) {
  const now = useNow(1000);
  const queryClient = useQueryClient();
  const expiresAt = service.expiresAt ? Date.parse(service.expiresAt) : null;
  const isDue = expiresAt !== null && expiresAt <= now;
  const isAwaitingSweep = isDue && service.enabled;
  useEffect(() => {
    if (!isAwaitingSweep) return;
    const timer = setInterval(() => void queryClient.invalidateQueries({ queryKey: serviceKeys.all }), 1000);
    return () => clearInterval(timer);
  }, [isAwaitingSweep, queryClient]);
  if (expiresAt === null) return null;
  const text = isDue
    ? t('services.expiry.expired', { date: formatDateTime(expiresAt) })
    : t('services.expiry.expiresIn', { time: remaining(expiresAt - now) });
  return (
    <p
      className="mt-1 text-xs text-amber-700 dark:text-amber-400"
      data-testid="service-expiry"
      title={formatDateTime(expiresAt)}
    >
      {text}
    </p>
  );
}
