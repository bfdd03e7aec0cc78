import { act, render, screen } from '@testing-library/react';
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
});
