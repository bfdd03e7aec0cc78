import {
  accessMessages,
  formatDate,
  formatRelativeTime,
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
import { ShareLinkCreatedDialog, ShareLinkFormDialog } from './share-link-dialogs';

// A service's Visitor Access (beyond the console spec; docs/ACCESS.md): the policy applied now and where it comes
// from, its share links (create, copy once, revoke) and who is signed in (revoke).

const statusTone: Record<TokenStatus, 'green' | 'red' | 'yellow'> = {
  Active: 'green',
  Revoked: 'red',
  Expired: 'yellow',
};

const METHOD_LABELS: Record<VisitorSession['method'], string> = {
  sso: 'Single sign-on',
  password: 'Password',
  share: 'Share link',
};

const dateTime = (value: string): string => `${formatDate(value)} ${new Date(value).toLocaleTimeString()}`;

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
      title: 'Revoke Share Link',
      description: `The link "${link.name}" stops working at once, on every gateway, and whoever opened it is signed out.`,
      variant: 'danger',
      acceptButtonText: 'Yes, revoke it!',
    });
    if (isConfirmed)
      await revokeLink.mutateAsync(link.id).catch((error: unknown) => console.error('revoke share link failed', error));
  };

  let body: ReactNode;
  if (links.isPending) body = <Loading label="Loading share links" />;
  else if (links.isError)
    body = <p className="text-sm text-red-600 dark:text-red-400">Could not load the share links.</p>;
  else if (links.data.total === 0)
    body = <p className="text-sm text-gray-600 dark:text-gray-300">No share links yet.</p>;
  else
    body = (
      <>
        <Table>
          <THead>
            <Th>Name</Th>
            <Th className="hidden sm:table-cell">Below</Th>
            <Th className="hidden sm:table-cell">Expires</Th>
            <Th className="hidden sm:table-cell">Used</Th>
            <Th>
              <span className="sr-only">Actions</span>
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
                      <span className="font-medium">{link.name}</span> <Badge tone={statusTone[status]}>{status}</Badge>
                      {/* Phones: path and expiry under the name. */}
                      <span className="block text-xs text-gray-500 sm:hidden dark:text-gray-400">
                        {link.pathPrefix ?? service.pathLocation} · expires{' '}
                        {link.expiresAt ? dateTime(link.expiresAt) : 'never'}
                      </span>
                    </div>
                  </Td>
                  <Td className="hidden font-mono text-xs sm:table-cell">{link.pathPrefix ?? service.pathLocation}</Td>
                  <Td className="hidden sm:table-cell">{link.expiresAt ? dateTime(link.expiresAt) : 'Never'}</Td>
                  <Td className="hidden sm:table-cell">
                    {link.uses} {link.uses === 1 ? 'time' : 'times'}
                    {link.lastUsedAt && (
                      <span className="block text-xs text-gray-500 dark:text-gray-400">
                        last {formatRelativeTime(link.lastUsedAt)}
                      </span>
                    )}
                  </Td>
                  <Td className="w-px text-right">
                    {status === 'Active' && (
                      <Button
                        variant="secondary"
                        aria-label={`Revoke share link ${link.name}`}
                        onClick={() => void revoke(link)}
                      >
                        Revoke
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
      title="Share links"
      actions={
        <Button variant="secondary" disabled={isAllowed !== true} onClick={() => setFormOpen(true)}>
          + Create share link
        </Button>
      }
    >
      {isAllowed === false && (
        <p className="text-xs text-gray-600 dark:text-gray-300">{accessMessages.shareLinksOff}.</p>
      )}
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
    return link ? `Share link “${link}”` : 'Holder of a share link';
  }
  return session.email ?? session.user ?? 'Visitor with the password';
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
      title: 'End Visitor Session',
      description: `${visitorName(session)} is signed out at once, on every gateway. Signing in again works while the policy lets them in.`,
      variant: 'danger',
      acceptButtonText: 'Yes, end it!',
    });
    if (isConfirmed)
      await revokeSession
        .mutateAsync(session.id)
        .catch((error: unknown) => console.error('revoke visitor session failed', error));
  };

  let body: ReactNode;
  if (sessions.isPending) body = <Loading label="Loading visitor sessions" />;
  else if (sessions.isError)
    body = <p className="text-sm text-red-600 dark:text-red-400">Could not load the visitor sessions.</p>;
  else if (sessions.data.total === 0)
    body = <p className="text-sm text-gray-600 dark:text-gray-300">Nobody is signed in.</p>;
  else
    body = (
      <>
        <Table>
          <THead>
            <Th>Who</Th>
            <Th className="hidden sm:table-cell">Since</Th>
            <Th className="hidden sm:table-cell">From</Th>
            <Th>
              <span className="sr-only">Actions</span>
            </Th>
          </THead>
          <TBody>
            {sessions.data.data.map((session) => (
              <Tr key={session.id}>
                <Td>
                  <div className="min-w-36 whitespace-normal">
                    <span className="font-medium">{visitorName(session)}</span>{' '}
                    {session.revoked && <Badge tone="red">Ended</Badge>}
                    <span className="block text-xs text-gray-500 dark:text-gray-400">
                      {METHOD_LABELS[session.method]}
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
                <Td className="hidden sm:table-cell" title={dateTime(session.created_at)}>
                  {formatRelativeTime(session.created_at)}
                </Td>
                <Td className="hidden font-mono text-xs sm:table-cell">{session.address ?? '-'}</Td>
                <Td className="w-px text-right">
                  {!session.revoked && (
                    <Button
                      variant="secondary"
                      aria-label={`End the session of ${visitorName(session)}`}
                      onClick={() => void revoke(session)}
                    >
                      End
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
  return <Section title="Signed-in visitors">{body}</Section>;
}

/** Opened from an HTTP service's row menu. */
export function VisitorAccessDialog({ service, onClose }: { service: HttpService; onClose: () => void }) {
  const access = useQuery(serviceAccessQueryOptions({ nodeId: service.nodeId, id: service.id }));
  const effective = access.data?.effective;
  const allowsShareLinks = effective ? effective.mode === 'protected' && effective.shareLinks : undefined;
  return (
    <Modal open size="large" title={`Visitor Access: ${service.name}`} onClose={onClose}>
      <div className="flex flex-col gap-6 px-5 py-4 text-sm">
        <Section title="Policy applied now">
          {access.isPending ? (
            <Loading label="Loading the access policy" />
          ) : access.isError ? (
            <p className="text-red-600 dark:text-red-400">Could not load the access policy.</p>
          ) : (
            <div className="flex flex-col gap-1">
              <p className="font-medium text-gray-700 dark:text-gray-200">{describeSource(access.data)}</p>
              <PolicyLines policy={access.data.effective} />
              <p className="text-xs text-gray-600 dark:text-gray-300">
                Change it under Visitor Access in the service&apos;s or its domain&apos;s form.
              </p>
            </div>
          )}
        </Section>
        <ShareLinks service={service} isAllowed={allowsShareLinks} />
        <VisitorSessions service={service} />
      </div>
      <div className="flex justify-end border-t border-gray-200 px-5 py-3 dark:border-gray-800">
        <Button onClick={onClose}>Close</Button>
      </div>
    </Modal>
  );
}
