import { render, screen } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { usePageStepBack } from './use-page-step-back';

function Pager({ isEmptied }: { isEmptied: boolean }) {
  const [page, setPage] = useState(3);
  usePageStepBack(isEmptied && page > 1, setPage);
  return <p>page {page}</p>;
}

describe('usePageStepBack', () => {
  it('steps back one page each time the page becomes empty, and not while it stays so', () => {
    const view = render(<Pager isEmptied={false} />);
    expect(screen.getByText('page 3')).toBeTruthy();
    view.rerender(<Pager isEmptied />);
    expect(screen.getByText('page 2')).toBeTruthy();
    view.rerender(<Pager isEmptied />);
    expect(screen.getByText('page 2')).toBeTruthy();
    view.rerender(<Pager isEmptied={false} />);
    view.rerender(<Pager isEmptied />);
    expect(screen.getByText('page 1')).toBeTruthy();
  });
});
