import { Fragment, type ReactNode } from 'react';
import { t, type MessageId, type MessageValues } from '../../i18n/i18n';

/**
 * The text of `id` with elements in place of some of its placeholders (a name in bold, a command in `<code>`), in the
 * language's own word order: each element goes in as a private-use character and the text is split around them.
 */
export function withElements(id: MessageId, elements: Record<string, ReactNode>, values?: MessageValues): ReactNode[] {
  const names = Object.keys(elements);
  const markers = Object.fromEntries(names.map((name, index) => [name, String.fromCharCode(0xe000 + index)]));
  return t(id, { ...values, ...markers })
    .split(/([\uE000-\uE0FF])/)
    .filter((part) => part !== '')
    .map((part, index) => {
      const name = part.length === 1 ? names[part.charCodeAt(0) - 0xe000] : undefined;
      return name === undefined ? part : <Fragment key={index}>{elements[name]}</Fragment>;
    });
}
