// Links the shell and the welcome page point to (console-spec §1). One place, so a fork changes them once.
export const links = {
  sourceRepository: 'https://github.com/postern-gateway/postern',
  documentation: 'https://github.com/postern-gateway/postern/tree/main/docs',
  cliInstall: 'https://github.com/postern-gateway/postern/tree/main/apps/cli#install',
  dockerGateway: 'https://github.com/postern-gateway/postern/tree/main/deploy#docker',
  kubernetesGateway: 'https://github.com/postern-gateway/postern/tree/main/deploy/helm',
  nodeClientImage: 'https://github.com/postern-gateway/postern/tree/main/deploy#node-client-image',
  nodeHelmChart: 'https://github.com/postern-gateway/postern/tree/main/deploy/helm',
  contact: 'https://github.com/postern-gateway/postern/issues',
  sponsor: 'https://github.com/sponsors/postern-gateway',
} as const;
