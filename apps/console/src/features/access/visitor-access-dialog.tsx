import {
  tokenStatus,
  type HttpService,
  type ShareLink,
  type ShareLinkCreated,
  type TokenStatus,
  type VisitorSession,
} from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Button } from '../../components/ui/button';
import { Badge } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { Modal } from '../../components/ui/dialog';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import {
  ACCESS_PAGE_SIZE,
  serviceAccessQueryOptions,
  shareLinkListQueryOptions,
  useRevokeShareLink,
  useRevokeVisitorSession,
  visitorSessionListQueryOptions,
  type HttpServiceRef,
} from '../../queries/access';
import { PolicyLines } from './access-section';
import { describeSource } from './policy-summary';
import { accessDateTime, ShareLinkCreatedDialog, ShareLinkFormDialog } from './share-link-dialogs';
import { formatNumber, formatRelativeTime } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';

// A service's Visitor Access (beyond the console spec; docs/ACCESS.md): the policy applied now and where it comes
// from, its share links (create, copy once, revoke) and who is signed in (revoke).

const statusTone: Record<TokenStatus, 'green' | 'red' | 'yellow'> = {
  Active: 'green',
  Revoked: 'red',
  Expired: 'yellow',
};

const STATUS_LABELS: Record<TokenStatus, MessageId> = {
  Active: 'tokens.status.active',
  Revoked: 'tokens.status.revoked',
  Expired: 'tokens.status.expired',
};

const METHOD_LABELS: Record<VisitorSession['method'], MessageId> = {
  sso: 'access.sso',
  password: 'access.method.password',
  share: 'access.method.share',
};

function Section({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section aria-label={title} className="flex flex-col gap-2">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-base font-semibold">{title}</h3>
        {actions}
      </div>
      {children}
    </section>
  );
}

function Loading({ label }: { label: string }) {
  return (
    <div className="flex justify-center py-6">
      <Spinner label={label} />
    </div>
  );
}

function ShareLinks({ service, isAllowed }: { service: HttpService; isAllowed: boolean | undefined }) {
  const ref: HttpServiceRef = { nodeId: service.nodeId, id: service.id };
  const [page, setPage] = useState(1);
  const [isFormOpen, setFormOpen] = useState(false);
  const [created, setCreated] = useState<ShareLinkCreated | null>(null);
  const links = useQuery(shareLinkListQueryOptions(ref, page));
  useClampPage(page, ACCESS_PAGE_SIZE, links.data?.total, setPage);
  const confirm = useConfirm();
  const revokeLink = useRevokeShareLink(ref);

  const revoke = async (link: ShareLink) => {
    const isConfirmed = await confirm({
      title: t('access.links.revokeTitle'),
      description: t('access.links.revokeConfirm', { name: link.name }),
      variant: 'danger',
      acceptButtonText: t('access.links.revokeAccept'),
    });
    if (isConfirmed)
      await revokeLink.mutateAsync(link.id).catch((error: unknown) => console.error('revoke share link failed', error));
  };

  let body: ReactNode;
  if (links.isPending) body = <Loading label={t('access.links.loading')} />;
  else if (links.isError)
    body = <p className="text-sm text-red-600 dark:text-red-400">{t('access.links.loadError')}</p>;
  else if (links.data.total === 0)
    body = <p className="text-sm text-gray-600 dark:text-gray-300">{t('access.links.none')}</p>;
  else
    body = (
      <>
        <Table>
          <THead>
            <Th>{t('access.column.name')}</Th>
            <Th className="hidden sm:table-cell">{t('access.links.below')}</Th>
            <Th className="hidden sm:table-cell">{t('access.links.expires')}</Th>
            <Th className="hidden sm:table-cell">{t('access.links.used')}</Th>
            <Th>
              <span className="sr-only">{t('ui.actions')}</span>
            </Th>
          </THead>
          <TBody>
            {links.data.data.map((link) => {
              const status = tokenStatus({ revoked: link.revoked, expireAt: link.expiresAt });
              return (
                <Tr key={link.id}>
                  <Td>
                    {/* Wraps on a phone, so the row keeps its Revoke in view. */}
                    <div className="min-w-36 whitespace-normal">
                      <span className="font-medium">{link.name}</span>{' '}
                      <Badge tone={statusTone[status]}>{t(STATUS_LABELS[status])}</Badge>
                      {/* Phones: path and expiry under the name. */}
                      <span className="block text-xs text-gray-500 sm:hidden dark:text-gray-400">
                        {t('access.links.phoneLine', {
                          path: link.pathPrefix ?? service.pathLocation,
                          when: link.expiresAt ? accessDateTime(link.expiresAt) : t('access.links.neverLower'),
                        })}
                      </span>
                    </div>
                  </Td>
                  <Td className="hidden font-mono text-xs sm:table-cell">{link.pathPrefix ?? service.pathLocation}</Td>
                  <Td className="hidden sm:table-cell">
                    {link.expiresAt ? accessDateTime(link.expiresAt) : t('access.links.never')}
                  </Td>
                  <Td className="hidden sm:table-cell">
                    {t('access.links.uses', { count: link.uses, n: formatNumber(link.uses) })}
                    {link.lastUsedAt && (
                      <span className="block text-xs text-gray-500 dark:text-gray-400">
                        {t('access.links.lastUsed', { when: formatRelativeTime(link.lastUsedAt) })}
                      </span>
                    )}
                  </Td>
                  <Td className="w-px text-right">
                    {status === 'Active' && (
                      <Button
                        variant="secondary"
                        aria-label={t('access.links.revokeNamed', { name: link.name })}
                        onClick={() => void revoke(link)}
                      >
                        {t('access.revoke')}
                      </Button>
                    )}
                  </Td>
                </Tr>
              );
            })}
          </TBody>
        </Table>
        <Pagination
          page={links.data.page}
          limit={links.data.limit}
          total={links.data.total}
          onPageChange={setPage}
          isLoading={links.isPlaceholderData}
        />
      </>
    );

  return (
    <Section
      title={t('access.shareLinks')}
      actions={
        <Button variant="secondary" disabled={isAllowed !== true} onClick={() => setFormOpen(true)}>
          {t('access.links.create')}
        </Button>
      }
    >
      {isAllowed === false && <p className="text-xs text-gray-600 dark:text-gray-300">{t('access.links.off')}</p>}
      {body}
      {isFormOpen && (
        <ShareLinkFormDialog
          service={service}
          onClose={() => setFormOpen(false)}
          onCreated={(link) => {
            setFormOpen(false);
            setCreated(link);
          }}
        />
      )}
      <ShareLinkCreatedDialog link={created} onClose={() => setCreated(null)} />
    </Section>
  );
}

/** The subject the gateway gives a share link's visitors (what a backend sees as X-Postern-User). */
const SHARE_SUBJECT_PREFIX = 'share:';

/** Who a session is, as far as the gateway knows: the email or user of a sign-on, the link, or the password. */
function visitorName(session: VisitorSession): string {
  if (session.method === 'share') {
    const link = session.user?.startsWith(SHARE_SUBJECT_PREFIX)
      ? session.user.slice(SHARE_SUBJECT_PREFIX.length)
      : null;
    return link ? t('access.visitor.shareNamed', { name: link }) : t('access.visitor.shareHolder');
  }
  return session.email ?? session.user ?? t('access.visitor.password');
}

function VisitorSessions({ service }: { service: HttpService }) {
  const ref: HttpServiceRef = { nodeId: service.nodeId, id: service.id };
  const [page, setPage] = useState(1);
  const sessions = useQuery(visitorSessionListQueryOptions(ref, page));
  useClampPage(page, ACCESS_PAGE_SIZE, sessions.data?.total, setPage);
  const confirm = useConfirm();
  const revokeSession = useRevokeVisitorSession(ref);

  const revoke = async (session: VisitorSession) => {
    const isConfirmed = await confirm({
      title: t('access.sessions.endTitle'),
      description: t('access.sessions.endConfirm', { who: visitorName(session) }),
      variant: 'danger',
      acceptButtonText: t('access.sessions.endAccept'),
    });
    if (isConfirmed)
      await revokeSession
        .mutateAsync(session.id)
        .catch((error: unknown) => console.error('revoke visitor session failed', error));
  };

  let body: ReactNode;
  if (sessions.isPending) body = <Loading label={t('access.sessions.loading')} />;
  else if (sessions.isError)
    body = <p className="text-sm text-red-600 dark:text-red-400">{t('access.sessions.loadError')}</p>;
  else if (sessions.data.total === 0)
    body = <p className="text-sm text-gray-600 dark:text-gray-300">{t('access.sessions.none')}</p>;
  else
    body = (
      <>
        <Table>
          <THead>
            <Th>{t('access.sessions.who')}</Th>
            <Th className="hidden sm:table-cell">{t('access.sessions.since')}</Th>
            <Th className="hidden sm:table-cell">{t('access.sessions.from')}</Th>
            <Th>
              <span className="sr-only">{t('ui.actions')}</span>
            </Th>
          </THead>
          <TBody>
            {sessions.data.data.map((session) => (
              <Tr key={session.id}>
                <Td>
                  <div className="min-w-36 whitespace-normal">
                    <span className="font-medium">{visitorName(session)}</span>{' '}
                    {session.revoked && <Badge tone="red">{t('access.sessions.ended')}</Badge>}
                    <span className="block text-xs text-gray-500 dark:text-gray-400">
                      {t(METHOD_LABELS[session.method])}
                      {session.groups.length > 0 ? ` · ${session.groups.join(', ')}` : ''}
                      {/* Phones: since and from under the name, one column instead of three. */}
                      <span className="sm:hidden">
                        {' · '}
                        {formatRelativeTime(session.created_at)}
                        {session.address ? ` · ${session.address}` : ''}
                      </span>
                    </span>
                  </div>
                </Td>
                <Td className="hidden sm:table-cell" title={accessDateTime(session.created_at)}>
                  {formatRelativeTime(session.created_at)}
                </Td>
                <Td className="hidden font-mono text-xs sm:table-cell">{session.address ?? '-'}</Td>
                <Td className="w-px text-right">
                  {!session.revoked && (
                    <Button
                      variant="secondary"
                      aria-label={t('access.sessions.endNamed', { who: visitorName(session) })}
                      onClick={() => void revoke(session)}
                    >
                      {t('access.sessions.end')}
                    </Button>
                  )}
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
        <Pagination
          page={sessions.data.page}
          limit={sessions.data.limit}
          total={sessions.data.total}
          onPageChange={setPage}
          isLoading={sessions.isPlaceholderData}
        />
      </>
    );
  return <Section title={t('access.sessions.title')}>{body}</Section>;
}

/** Opened from an HTTP service's row menu. */
export function VisitorAccessDialog({ service, onClose }: { service: HttpService; onClose: () => void }) {
  const access = useQuery(serviceAccessQueryOptions({ nodeId: service.nodeId, id: service.id }));
  const effective = access.data?.effective;
  const allowsShareLinks = effective ? effective.mode === 'protected' && effective.shareLinks : undefined;
  return (
    <Modal open size="large" title={t('access.dialog.title', { name: service.name })} onClose={onClose}>
      <div className="flex flex-col gap-6 px-5 py-4 text-sm">
        <Section title={t('access.dialog.policy')}>
          {access.isPending ? (
            <Loading label={t('access.dialog.loading')} />
          ) : access.isError ? (
            <p className="text-red-600 dark:text-red-400">{t('access.dialog.loadError')}</p>
          ) : (
            <div className="flex flex-col gap-1">
              <p className="font-medium text-gray-700 dark:text-gray-200">{describeSource(access.data)}</p>
              <PolicyLines policy={access.data.effective} />
              <p className="text-xs text-gray-600 dark:text-gray-300">{t('access.dialog.changeIt')}</p>
            </div>
          )}
        </Section>
        <ShareLinks service={service} isAllowed={allowsShareLinks} />
        <VisitorSessions service={service} />
      </div>
      <div className="flex justify-end border-t border-gray-200 px-5 py-3 dark:border-gray-800">
        <Button onClick={onClose}>{t('ui.close')}</Button>
      </div>
    </Modal>
  );
}
