import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConfirmProvider } from './components/ui/confirm';
import { Toaster } from './components/ui/toast';
import { activateLanguage, initialLanguage, t, translatedMessage, useLanguage } from './i18n/i18n';
import { setMessageTranslator } from './lib/api';
import { createQueryClient } from './lib/query-client';
import { applyTheme, followSystemTheme, readTheme } from './lib/theme';
import { router } from './router';
import './styles.css';

applyTheme(readTheme());
followSystemTheme();

const queryClient = createQueryClient();
const container = document.getElementById('root');
if (!container) throw new Error('#root is missing from index.html');

/** A new language renders the console anew (texts are read at render); the router and the query cache stay. */
function Console() {
  const language = useLanguage();
  return (
    <ConfirmProvider key={language}>
      <RouterProvider router={router} />
      <Toaster dismissLabel={t('common.dismiss')} />
    </ConfirmProvider>
  );
}

// A server's messages (toasts of 400 answers) in the operator's language, through their message codes.
setMessageTranslator(translatedMessage);

// The language's catalogue comes first: a screen never shows before its words. A catalogue that cannot be fetched
// leaves the page to the route's own chunk, which fails the same way (the gateway unreachable).
void activateLanguage(initialLanguage())
  .catch(() => activateLanguage('en'))
  .catch(() => undefined)
  .finally(() => {
    createRoot(container).render(
      <StrictMode>
        <QueryClientProvider client={queryClient}>
          <Console />
        </QueryClientProvider>
      </StrictMode>,
    );
  });
