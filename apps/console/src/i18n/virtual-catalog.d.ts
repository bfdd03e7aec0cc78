// A language's catalogue, compiled at build by i18n-catalogs.ts.
declare module 'virtual:postern-catalog/*' {
  import type { Messages } from '@lingui/core';

  const messages: Messages;
  export default messages;
}
