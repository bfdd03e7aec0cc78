import type { NodeCreated } from '@postern/contract';
import { useNavigate } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { lazy, Suspense, useState } from 'react';
import { Button, buttonClasses } from '../../components/ui/button';
import { BookIcon, CodeIcon, HeartIcon, PlusIcon, ServerIcon, TerminalIcon } from '../../components/ui/icons';
import { links } from '../../lib/links';

// The spec's welcome cards (the spec's "Screens and routes" "Home"): shown while the gateway holds nothing yet.

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

// The form (and zod with it) loads when asked for.
const loadNodeFormDialog = () => import('../nodes/node-form-dialog');
const NodeFormDialog = lazy(() => loadNodeFormDialog().then((module) => ({ default: module.NodeFormDialog })));
const loadNodeReadyDialog = () => import('../nodes/node-ready-dialog');
const NodeReadyDialog = lazy(() => loadNodeReadyDialog().then((module) => ({ default: module.NodeReadyDialog })));

export function WelcomeCards() {
  const navigate = useNavigate();
  const [isFormOpen, setFormOpen] = useState(false);
  const [createdNode, setCreatedNode] = useState<NodeCreated | null>(null);
  const openNodeForm = () => setFormOpen(true);
  const preload = () => {
    void loadNodeFormDialog();
    void loadNodeReadyDialog();
  };

  return (
    <>
      <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
        <WelcomeCard
          icon={<ServerIcon className="size-5" />}
          title="Create your first node"
          action={
            <Button onClick={openNodeForm} onMouseEnter={preload}>
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
          services from the command line. Creating a node shows the command that installs and connects it.
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
    </>
  );
}

/** The spec's links once the welcome cards are gone: one line at the foot of the page. */
export function HelpLinks() {
  const linkClass = 'text-brand-600 underline-offset-2 hover:underline dark:text-blue-400';
  const items: [string, string][] = [
    ['Documentation', links.documentation],
    ['Install the CLI', links.cliInstall],
    ['Docker', links.dockerGateway],
    ['Kubernetes', links.kubernetesGateway],
    ['Source repository', links.sourceRepository],
    ['Sponsor', links.sponsor],
  ];
  return (
    <nav aria-label="Help and links" className="border-t border-gray-200 pt-4 text-sm dark:border-gray-800">
      <ul className="flex flex-wrap gap-x-5 gap-y-2">
        {items.map(([label, href]) => (
          <li key={label}>
            <a href={href} target="_blank" rel="noreferrer" className={linkClass}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
