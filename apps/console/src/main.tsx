import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConfirmProvider } from './components/ui/confirm';
import { Toaster } from './components/ui/toast';
import { createQueryClient } from './lib/query-client';
import { applyTheme, followSystemTheme, readTheme } from './lib/theme';
import { router } from './router';
import './styles.css';

applyTheme(readTheme());
followSystemTheme();

const queryClient = createQueryClient();
const container = document.getElementById('root');
if (!container) throw new Error('#root is missing from index.html');

createRoot(container).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ConfirmProvider>
        <RouterProvider router={router} />
        <Toaster />
      </ConfirmProvider>
    </QueryClientProvider>
  </StrictMode>,
);
