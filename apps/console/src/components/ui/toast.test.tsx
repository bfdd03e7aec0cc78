import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { showToast } from '../../lib/toast-store';
import { Toaster } from './toast';

describe('toasts', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('disappear after 3000 ms by default, or after their own duration', () => {
    render(<Toaster />);
    act(() => {
      showToast({ message: 'Node deleted successfully!', type: 'success' });
      showToast({ message: 'Slow one', duration: 5000 });
    });
    expect(screen.getByText('Node deleted successfully!')).toBeTruthy();
    act(() => {
      vi.advanceTimersByTime(2999);
    });
    expect(screen.queryByText('Node deleted successfully!')).not.toBeNull();
    act(() => {
      vi.advanceTimersByTime(1);
    });
    expect(screen.queryByText('Node deleted successfully!')).toBeNull();
    expect(screen.getByText('Slow one')).toBeTruthy();
    act(() => {
      vi.advanceTimersByTime(2000);
    });
    expect(screen.queryByText('Slow one')).toBeNull();
  });

  it('keep an error long enough to read (longer for a longer text) and not while the pointer is on it', () => {
    render(<Toaster />);
    const long = `Could not save:${' the gateway said something long'.repeat(10)}`;
    act(() => {
      showToast({ message: 'Network Error', type: 'error' });
      showToast({ message: long, type: 'error' });
    });
    act(() => {
      vi.advanceTimersByTime(9_999);
    });
    expect(screen.queryByText('Network Error')).not.toBeNull();
    act(() => {
      vi.advanceTimersByTime(1);
    });
    expect(screen.queryByText('Network Error')).toBeNull();
    const longToast = screen.getByText(long).closest('[role="alert"]');
    if (!longToast) throw new Error('no alert');
    fireEvent.pointerEnter(longToast);
    act(() => {
      vi.advanceTimersByTime(120_000);
    });
    expect(screen.queryByText(long)).not.toBeNull();
    fireEvent.pointerLeave(longToast);
    act(() => {
      vi.advanceTimersByTime(30_000);
    });
    expect(screen.queryByText(long)).toBeNull();
  });
});
