import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DatePicker } from './date-picker';

const now = () => new Date(2026, 10, 22, 14, 0); // 22 Nov 2026, local time

describe('DatePicker', () => {
  it("shows 'Select a date', blocks days before today and gives the chosen day as ISO", () => {
    const onChange = vi.fn();
    render(<DatePicker label="Expire At (Optional)" name="expireAt" value={undefined} onChange={onChange} now={now} />);
    fireEvent.click(screen.getByRole('button', { name: 'Expire At (Optional)' }));
    expect(screen.getByText('Select a date')).toBeTruthy();
    expect(screen.getByRole('button', { name: '21' })).toHaveProperty('disabled', true);
    expect(screen.getByRole('button', { name: 'Previous month' })).toHaveProperty('disabled', true);
    fireEvent.click(screen.getByRole('button', { name: '22' }));
    const chosen = new Date(onChange.mock.calls[0]?.[0] as string);
    expect(chosen.getTime()).toBeGreaterThan(now().getTime());
    expect([chosen.getFullYear(), chosen.getMonth(), chosen.getDate()]).toEqual([2026, 10, 22]);
  });

  it('clears to undefined', () => {
    const onChange = vi.fn();
    render(
      <DatePicker
        label="Expire At"
        name="expireAt"
        value={new Date(2026, 11, 1, 23, 59).toISOString()}
        onChange={onChange}
        now={now}
      />,
    );
    expect(screen.getByText('12/01/2026')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
    expect(onChange).toHaveBeenCalledWith(undefined);
  });
});
