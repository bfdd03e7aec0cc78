import type { ConfigFiles, DesiredState } from '../types.js';
import { renderHttpConfig } from './render-http.js';
import { renderMainConfig } from './render-main.js';
import { renderStreamConfig } from './render-stream.js';
import { validateRenderOptions, type NginxRenderOptions } from './options.js';

/** Desired state → the files of one nginx config generation (paths relative to the generation dir). */
export function renderNginxConfig(state: Pick<DesiredState, 'http' | 'stream' | 'domains'>, options: NginxRenderOptions): ConfigFiles {
  validateRenderOptions(options);
  return {
    'nginx.conf': renderMainConfig(options),
    'http.conf': renderHttpConfig(state.http, state.domains, options),
    'stream.conf': renderStreamConfig(state.stream, options),
  };
}
