import type { ConfigFiles, DesiredState } from '../types.js';
import { renderHttpConfig } from './render-http.js';
import { renderMainConfig } from './render-main.js';
import { renderStreamConfig } from './render-stream.js';
import { renderOverlayConf } from './overlay.js';
import { OVERLAY_CONF_FILE, overlayDir, validateRenderOptions, type NginxRenderOptions } from './options.js';

/**
 * Desired state → the files of one nginx config generation (paths relative to the generation dir). The overlay
 * dir named here is epoch 0's; the reconciler gives each generation it switches in its own (`overlayConfFor`).
 */
export function renderNginxConfig(state: Pick<DesiredState, 'http' | 'stream' | 'domains'>, options: NginxRenderOptions): ConfigFiles {
  validateRenderOptions(options);
  return {
    'nginx.conf': renderMainConfig(options),
    'http.conf': renderHttpConfig(state.http, state.domains, options),
    'stream.conf': renderStreamConfig(state.stream, options),
    ...overlayConfFor(options, 0),
  };
}

/** The file that points a generation at the overlay dir of `epoch`. */
export function overlayConfFor(options: NginxRenderOptions, epoch: number): ConfigFiles {
  return { [OVERLAY_CONF_FILE]: renderOverlayConf(overlayDir(options.prefixDir, epoch)) };
}
