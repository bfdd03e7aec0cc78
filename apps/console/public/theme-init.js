/* global window, document */
// Applies the stored theme before the first paint so dark mode does not flash white. A separate file (not an inline
// script) so a Content-Security-Policy of script-src 'self' keeps working. Keep in step with src/lib/theme.ts.
(function () {
  try {
    var theme = localStorage.getItem('theme') || 'auto';
    var dark = theme === 'dark' || (theme === 'auto' && window.matchMedia('(prefers-color-scheme: dark)').matches);
    if (dark) document.documentElement.classList.add('dark');
  } catch {
    // Storage can be blocked; the app applies the theme again once it runs.
  }
})();
