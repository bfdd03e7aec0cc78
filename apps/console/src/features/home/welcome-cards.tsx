import type { NodeCreated } from '@postern/contract';
import { useNavigate } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { lazy, Suspense, useState } from 'react';
import { Button, buttonClasses } from '../../components/ui/button';
import { BookIcon, CodeIcon, HeartIcon, PlusIcon, ServerIcon, TerminalIcon } from '../../components/ui/icons';
import { links } from '../../lib/links';
import { t, withMoreTexts, withSlot } from '../../i18n/i18n';

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
const loadNodeFormDialog = () => withMoreTexts(import('../nodes/node-form-dialog'));
const NodeFormDialog = lazy(() => loadNodeFormDialog().then((module) => ({ default: module.NodeFormDialog })));
const loadNodeReadyDialog = () => withMoreTexts(import('../nodes/node-ready-dialog'));
const NodeReadyDialog = lazy(() => loadNodeReadyDialog().then((module) => ({ default: module.NodeReadyDialog })));

/** The CLI card's text, with the command's name in code in the language's own word order. */
function CliText() {
  const [before, after] = withSlot('home.cli.text', 'command');
  return (
    <>
      {before}
      <code className="font-mono">postern</code>
      {after}
    </>
  );
}

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
          title={t('home.firstNode.title')}
          action={
            <Button onClick={openNodeForm} onMouseEnter={preload}>
              <PlusIcon className="size-4" /> {t('home.firstNode.action')}
            </Button>
          }
        >
          {t('home.firstNode.text')}
        </WelcomeCard>
        <WelcomeCard
          icon={<TerminalIcon className="size-5" />}
          title={t('home.cli.title')}
          action={
            <a href={links.cliInstall} target="_blank" rel="noreferrer" className={externalLinkClass}>
              {t('home.cli.title')}
            </a>
          }
        >
          <CliText />
        </WelcomeCard>
        <WelcomeCard
          icon={<CodeIcon className="size-5" />}
          title={t('home.deployments.title')}
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
          {t('home.deployments.text')}
        </WelcomeCard>
      </div>

      <div className="grid gap-4 md:grid-cols-2">
        <WelcomeCard
          icon={<BookIcon className="size-5" />}
          title={t('home.help.title')}
          action={
            <>
              <a href={links.documentation} target="_blank" rel="noreferrer" className={externalLinkClass}>
                {t('shell.documentation')}
              </a>
              <a href={links.sourceRepository} target="_blank" rel="noreferrer" className={externalLinkClass}>
                {t('shell.sourceRepository')}
              </a>
            </>
          }
        >
          {t('home.help.text')}
        </WelcomeCard>
        <WelcomeCard
          icon={<HeartIcon className="size-5" />}
          title={t('home.sponsor.title')}
          action={
            <a href={links.sponsor} target="_blank" rel="noreferrer" className={externalLinkClass}>
              {t('home.sponsor.action')}
            </a>
          }
        >
          {t('home.sponsor.text')}
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
    [t('shell.documentation'), links.documentation],
    [t('home.cli.title'), links.cliInstall],
    ['Docker', links.dockerGateway],
    ['Kubernetes', links.kubernetesGateway],
    [t('shell.sourceRepository'), links.sourceRepository],
    [t('home.sponsor.action'), links.sponsor],
  ];
  return (
    <nav aria-label={t('home.helpLinks')} className="border-t border-gray-200 pt-4 text-sm dark:border-gray-800">
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
