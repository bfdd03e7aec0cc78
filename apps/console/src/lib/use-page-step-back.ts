import { useState, type Dispatch, type SetStateAction } from 'react';

/**
 * Deleting the last row of a later page leaves it empty: step back once, when the page becomes empty. Adjusted
 * while rendering (react.dev, "you might not need an effect") rather than in an effect, so the empty page is never
 * committed and shown.
 */
export function usePageStepBack(isPageEmptied: boolean, setPage: Dispatch<SetStateAction<number>>): void {
  const [wasEmptied, setWasEmptied] = useState(false);
  if (isPageEmptied !== wasEmptied) {
    setWasEmptied(isPageEmptied);
    if (isPageEmptied) setPage((current) => current - 1);
  }
}
