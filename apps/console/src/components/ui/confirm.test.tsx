import { fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfirmProvider, useConfirm, type ConfirmOptions } from './confirm';

// The dialog's code is fetched when first asked (confirm.tsx): the question still gets its answer, and a fetch that
// fails (the gateway unreachable) counts as cancelled instead of breaking the page.

const question: ConfirmOptions = { title: 'Delete Node', description: 'Sure?', acceptButtonText: 'Yes, delete it!' };

function Asker({ useAsk }: { useAsk: typeof useConfirm }) {
  const confirm = useAsk();
  const [answer, setAnswer] = useState('none');
  return (
    <>
      <button type="button" onClick={() => void confirm(question).then((accepted) => setAnswer(String(accepted)))}>
        Delete
      </button>
      <p>answer: {answer}</p>
    </>
  );
}

describe('confirm', () => {
  afterEach(() => {
    vi.doUnmock('./confirm-dialog');
    vi.resetModules();
  });

  it('shows the dialog on the first question and answers it', async () => {
    render(
      <ConfirmProvider>
        <Asker useAsk={useConfirm} />
      </ConfirmProvider>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Yes, delete it!' }));
    expect(await screen.findByText('answer: true')).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('counts a question whose dialog could not be fetched as cancelled, and the page stays', async () => {
    vi.resetModules();
    vi.doMock('./confirm-dialog', () => {
      throw new Error('Failed to fetch dynamically imported module');
    });
    const fresh = await import('./confirm');
    render(
      <fresh.ConfirmProvider>
        <Asker useAsk={fresh.useConfirm} />
      </fresh.ConfirmProvider>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('answer: false')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Delete' })).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
