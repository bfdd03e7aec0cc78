import { fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { activateLanguage, loadMoreTexts } from '../../i18n/i18n';
import { describePage, Pagination } from './pagination';

describe('pagination', () => {
  it("says 'Showing x to y of z results'", () => {
    expect(describePage(1, 10, 23)).toBe('Showing 1 to 10 of 23 results');
    expect(describePage(3, 10, 23)).toBe('Showing 21 to 23 of 23 results');
    expect(describePage(2, 5, 6)).toBe('Showing 6 to 6 of 6 results');
  });

  it('is hidden when everything fits on one page', () => {
    const { container } = render(<Pagination page={1} limit={10} total={10} onPageChange={() => undefined} />);
    expect(container.innerHTML).toBe('');
  });

  it('moves with Previous and Next and stops at the ends', () => {
    const onPageChange = vi.fn();
    render(<Pagination page={1} limit={5} total={12} onPageChange={onPageChange} />);
    expect(screen.getByText('Showing 1 to 5 of 12 results')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Previous' })).toHaveProperty('disabled', true);
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(onPageChange).toHaveBeenCalledWith(2);
  });

  it('says a page is loading instead of showing the old range while another page is fetched', () => {
    render(<Pagination page={1} limit={5} total={12} onPageChange={() => undefined} isLoading />);
    expect(screen.getByRole('status', { name: 'Loading the page' })).toBeTruthy();
    expect(screen.queryByText('Showing 1 to 5 of 12 results')).toBeNull();
  });

  describe('in German', () => {
    afterEach(() => activateLanguage('en'));

    it('words the range and the buttons in German, with German digit grouping', async () => {
      await activateLanguage('de');
      await loadMoreTexts();
      render(<Pagination page={2} limit={1000} total={2500} onPageChange={() => undefined} />);
      expect(screen.getByText('1.001 bis 2.000 von 2.500 Ergebnissen')).toBeTruthy();
      expect(screen.getByRole('navigation', { name: 'Seitennavigation' })).toBeTruthy();
      expect(screen.getByRole('button', { name: 'Zurück' })).toHaveProperty('disabled', false);
      expect(screen.getByRole('button', { name: 'Weiter' })).toBeTruthy();
      expect(screen.queryByText(/Showing|Previous|Next/)).toBeNull();
    });
  });
});
