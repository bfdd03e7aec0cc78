import { fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { activateLanguage, loadMoreTexts } from '../../i18n/i18n';
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

  describe('in Japanese', () => {
    afterEach(() => activateLanguage('en'));

    it('names the month, the weekdays and its buttons in Japanese', async () => {
      await activateLanguage('ja');
      await loadMoreTexts();
      render(<DatePicker label="有効期限" name="expireAt" value={undefined} onChange={() => undefined} now={now} />);
      expect(screen.getByText('日付を選択')).toBeTruthy();
      fireEvent.click(screen.getByRole('button', { name: '有効期限' }));
      expect(screen.getByRole('dialog', { name: '日付を選んでください' })).toBeTruthy();
      expect(screen.getByText('2026年11月')).toBeTruthy();
      expect(screen.getByText('日')).toBeTruthy();
      expect(screen.getByRole('button', { name: '次の月' })).toBeTruthy();
      expect(screen.queryByText(/Su|Mo|November|Select a date/)).toBeNull();
    });
  });
});
