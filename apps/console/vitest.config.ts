import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { catalogPlugin } from './i18n-catalogs.ts';

export default defineConfig({
  plugins: [react(), catalogPlugin()],
  test: {
    environment: 'happy-dom',
    setupFiles: ['./src/test-setup.ts'],
  },
});
