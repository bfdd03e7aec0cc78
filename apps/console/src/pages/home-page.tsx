import type { NodeCreated } from '@postern/contract';
import { useNavigate } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { lazy, Suspense, useState } from 'react';
import { Button, buttonClasses } from '../components/ui/button';
import { BookIcon, CodeIcon, HeartIcon, PlusIcon, ServerIcon, TerminalIcon } from '../components/ui/icons';
import { links } from '../lib/links';

function WelcomeCard({
  icon,
  title,
  children,
  action,
}: {
  icon: ReactNode;
  title: string;
  children: ReactNode;
  action: ReactNode;
}) {
  return (
    <section className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-5 shadow-sm dark:border-gray-800 dark:bg-gray-900">
      <div className="flex items-center gap-3">
        <span className="rounded-md bg-brand-50 p-2 text-brand-600 dark:bg-gray-800">{icon}</span>
        <h2 className="text-base font-semibold">{title}</h2>
      </div>
      <div className="flex-1 text-sm text-gray-600 dark:text-gray-300">{children}</div>
      <div className="flex flex-wrap gap-2">{action}</div>
    </section>
  );
}

const externalLinkClass = buttonClasses('secondary');

// The form (and zod with it) loads when asked for, keeping the first page small.
const loadNodeFormDialog = () => import('../features/nodes/node-form-dialog');
const NodeFormDialog = lazy(() => loadNodeFormDialog().then((module) => ({ default: module.NodeFormDialog })));
// So does the ready dialog: it reads the gateway's public facts through a contract schema.
const loadNodeReadyDialog = () => import('../features/nodes/node-ready-dialog');
const NodeReadyDialog = lazy(() => loadNodeReadyDialog().then((module) => ({ default: module.NodeReadyDialog })));

// The figures come through the contract's schemas (zod): loaded after the first paint.
const SystemStatusPanel = lazy(() =>
  import('../features/observe/system-status-panel').then((module) => ({ default: module.SystemStatusPanel })),
);

export function HomePage() {
  const navigate = useNavigate();
  const [isFormOpen, setFormOpen] = useState(false);
  const [createdNode, setCreatedNode] = useState<NodeCreated | null>(null);

  return (
    <div className="flex flex-col gap-8">
      <header className="flex flex-col gap-2">
        <h1 className="text-2xl font-bold">Welcome to Postern</h1>
        <p className="max-w-3xl text-gray-600 dark:text-gray-300">
          Expose services running in private networks through a reverse VPN built on WireGuard. No firewall ports need
          opening on your side. Works with Docker, Kubernetes and Raspberry Pi, and SSL is automatic — Let's Encrypt or
          self-signed.
        </p>
      </header>

      <Suspense fallback={null}>
        <SystemStatusPanel />
      </Suspense>

      <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
        <WelcomeCard
          icon={<ServerIcon className="size-5" />}
          title="Create your first node"
          action={
            <Button
              onClick={() => setFormOpen(true)}
              onMouseEnter={() => {
                void loadNodeFormDialog();
                void loadNodeReadyDialog();
              }}
            >
              <PlusIcon className="size-4" /> Create Node
            </Button>
          }
        >
          A node is a machine in your private network that connects out to this gateway. Create one, run the connect
          command on it and expose its services.
        </WelcomeCard>
        <WelcomeCard
          icon={<TerminalIcon className="size-5" />}
          title="Install the CLI"
          action={
            <a href={links.cliInstall} target="_blank" rel="noreferrer" className={externalLinkClass}>
              Install the CLI
            </a>
          }
        >
          The <code className="font-mono">postern</code> command connects a node, keeps its tunnel up and exposes
          services from the command line.
        </WelcomeCard>
        <WelcomeCard
          icon={<CodeIcon className="size-5" />}
          title="Gateway deployments"
          action={
            <>
              <a href={links.dockerGateway} target="_blank" rel="noreferrer" className={externalLinkClass}>
                Docker
              </a>
              <a href={links.kubernetesGateway} target="_blank" rel="noreferrer" className={externalLinkClass}>
                Kubernetes
              </a>
            </>
          }
        >
          Run a node as a gateway for a whole network, with the container image or the Helm chart.
        </WelcomeCard>
      </div>

      <div className="grid gap-4 md:grid-cols-2">
        <WelcomeCard
          icon={<BookIcon className="size-5" />}
          title="Need help?"
          action={
            <>
              <a href={links.documentation} target="_blank" rel="noreferrer" className={externalLinkClass}>
                Documentation
              </a>
              <a href={links.sourceRepository} target="_blank" rel="noreferrer" className={externalLinkClass}>
                Source repository
              </a>
            </>
          }
        >
          Guides for nodes, domains, certificates and services, and the source code.
        </WelcomeCard>
        <WelcomeCard
          icon={<HeartIcon className="size-5" />}
          title="Support the project"
          action={
            <a href={links.sponsor} target="_blank" rel="noreferrer" className={externalLinkClass}>
              Sponsor
            </a>
          }
        >
          Postern is free software. Sponsoring keeps it maintained.
        </WelcomeCard>
      </div>

      {isFormOpen && (
        <Suspense fallback={null}>
          <NodeFormDialog open onClose={() => setFormOpen(false)} onCreated={setCreatedNode} />
        </Suspense>
      )}
      {createdNode && (
        <Suspense fallback={null}>
          <NodeReadyDialog
            node={createdNode}
            onClose={() => {
              setCreatedNode(null);
              void navigate({ to: '/nodes' });
            }}
          />
        </Suspense>
      )}
    </div>
  );
}
