import { translatedMessage } from './i18n';

// The server's messages and the forms' own checks in the operator's language: each carries a stable code (contract
// message-codes.ts) whose text is `error.<code>` in the catalogues, with the message's values (i18n.ts
// `translatedMessage`).

export { translatedMessage };

/** A field error as a 422 or a form check gives it: the English message, its code and values when it has them. */
export interface CodedFieldError {
  field?: string;
  message: string;
  code?: string | undefined;
  params?: Record<string, string | number> | undefined;
}

/** A field error's message in the active language. */
export const fieldErrorText = (error: CodedFieldError): string =>
  translatedMessage(error.message, error.code, error.params);
