import { render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { activateLanguage } from '../../i18n/i18n';
import { withElements } from './texts';

const sentence = () =>
  render(
    <p data-testid="sentence">
      {withElements('nodes.form.tokenNetworksHint', { command: <code>postern networks set</code> })}
    </p>,
  ).getByTestId('sentence');

describe('a message with elements in it', () => {
  afterEach(() => activateLanguage('en'));

  it('reads as the English text, with the element where its placeholder is', () => {
    const paragraph = sentence();
    expect(paragraph.textContent).toBe(
      'With postern networks set: private ranges only, none the gateway itself uses. Off: only you set them here.',
    );
    expect(paragraph.querySelector('code')?.textContent).toBe('postern networks set');
  });

  it('follows the language’s word order', async () => {
    await activateLanguage('ja');
    const paragraph = sentence();
    expect(paragraph.firstChild?.nodeName).toBe('CODE');
    expect(paragraph.textContent).toMatch(/^postern networks set で設定：/);
  });
});
