// Links the shell and the welcome page point to (the spec's "What the product does and for whom"). One place, so a fork
// changes them once. Each one names a file and heading of this repository that exists (lib/links.test.ts checks them
// against the checkout).

// The repository the README's clone line names.
const repository = 'https://github.com/postern/postern';
const file = (path: string, heading?: string) => `${repository}/blob/main/${path}${heading ? `#${heading}` : ''}`;

export const links = {
  sourceRepository: repository,
  /** The operators' guide: the repository's README. */
  documentation: file('README.md'),
  /** How to get the `postern` client onto a machine and connect it: the gateway's one-line install. */
  cliInstall: file('apps/cli/README.md', 'installing-on-a-node-the-gateways-one-line-install'),
  dockerGateway: file('deploy/README.md', '1-docker-compose'),
  kubernetesGateway: file('deploy/README.md', '2-kubernetes-with-helm'),
  nodeClientImage: file('deploy/README.md', 'node-client'),
  nodeHelmChart: file('deploy/helm/postern-node/README.md'),
  contact: `${repository}/issues`,
  sponsor: 'https://github.com/sponsors/postern',
} as const;
