import type { HttpService, TcpService } from '@postern/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { SelectField } from '../../components/ui/form-field';
import { serviceKeys } from '../../queries/services';
import { DURATIONS, formatRemaining, type ExpiryChoice } from './service-expiry-rules';

// Temporary exposure (beyond the spec): the form's "Expose For" choice and the remaining time on a service row.

type ExpiryFieldProps = {
  service: HttpService | TcpService | undefined;
  value: ExpiryChoice;
  onChange: (value: ExpiryChoice) => void;
};

export function ExpiryField({ service, value, onChange }: ExpiryFieldProps) {
  const current = service?.expiresAt;
  const options = service
    ? [
        { value: '', label: current ? `Keep (until ${new Date(current).toLocaleString()})` : 'Keep (no expiry)' },
        { value: 'none', label: 'No expiry' },
        ...DURATIONS,
      ]
    : [{ value: '', label: 'No expiry' }, ...DURATIONS];
  return (
    <SelectField
      label="Expose For (Optional)"
      name="expiry"
      description="A temporary exposure: when the time is up, the gateway disables the service (it is kept)."
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
    ? `Expired ${new Date(expiresAt).toLocaleString()}`
    : `Expires in ${formatRemaining(expiresAt - now)}`;
  return (
    <p
      className="mt-1 text-xs text-amber-700 dark:text-amber-400"
      data-testid="service-expiry"
      title={new Date(expiresAt).toLocaleString()}
    >
      {text}
    </p>
  );
}
