import { describe, expect, it } from 'vitest';
import { openFilesFor, openFilesHardLimit, workerConnectionsFor } from './sizing.js';

const GiB = 1024 ** 3;

describe('the HTTP instance sized to the machine', () => {
  it('gives each worker connections for a quarter of the memory at 64 KiB each, within 4,096-65,536', () => {
    expect(workerConnectionsFor(1 * GiB, 1, null)).toBe(4096);
    expect(workerConnectionsFor(0.5 * GiB, 4, null)).toBe(4096);
    expect(workerConnectionsFor(4 * GiB, 2, null)).toBe(8192);
    expect(workerConnectionsFor(24 * GiB, 2, null)).toBe(49_152);
    expect(workerConnectionsFor(256 * GiB, 2, null)).toBe(65_536);
  });

  it('stays within the open files a worker may have, and asks for no more than the hard limit', () => {
    // A container without CAP_SYS_RESOURCE: the workers cannot raise their hard limit of 20,000.
    expect(workerConnectionsFor(24 * GiB, 2, 20_000)).toBe(18_432);
    expect(openFilesFor(18_432, 20_000)).toBe(20_000);
    expect(openFilesFor(8192, 1_048_576)).toBe(17_408);
    expect(openFilesFor(4096, null)).toBe(9216);
    // Never below what the gateway always had.
    expect(workerConnectionsFor(24 * GiB, 2, 2048)).toBe(4096);
  });

  it('reads the hard limit on open files from /proc/self/limits', () => {
    const limits = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max processes             95594                95594                processes ',
      'Max open files            1024                 524288               files     ',
    ].join('\n');
    expect(openFilesHardLimit(limits)).toBe(524_288);
    expect(openFilesHardLimit('Max open files            unlimited            unlimited            files')).toBeNull();
    expect(openFilesHardLimit('')).toBeNull();
  });
});
