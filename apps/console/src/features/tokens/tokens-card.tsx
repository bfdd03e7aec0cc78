import type { Node, PersonalAccessToken, PersonalAccessTokenCreated, TokenStatus } from '@postern/contract';
import { tokenStatus } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { EmptyState } from '../../components/ui/empty-state';
import { ActionMenu } from '../../components/ui/menu';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { TOKEN_PAGE_SIZE, tokenListQueryOptions, useDeleteToken, useRevokeToken } from '../../queries/tokens';
import { deleteTokenConfirmation, revokeTokenConfirmation } from './token-confirmations';
import { TokenCreatedDialog } from './token-created-dialog';
import { TokenFormDialog } from './token-form-dialog';
import { t, type MessageId } from '../../i18n/i18n';

const statusTone: Record<TokenStatus, 'green' | 'red' | 'yellow'> = {
  Active: 'green',
  Revoked: 'red',
  Expired: 'yellow',
};
const statusLabel: Record<TokenStatus, MessageId> = {
  Active: 'tokens.status.active',
  Revoked: 'tokens.status.revoked',
  Expired: 'tokens.status.expired',
};

/** 'Node Access Tokens' (the spec's "Screens and routes"): pages of 5, minimum height 230px. */
export function TokensCard({ node }: { node: Node }) {
  const [page, setPage] = useState(1);
  const [isFormOpen, setFormOpen] = useState(false);
  const [created, setCreated] = useState<PersonalAccessTokenCreated | null>(null);
  const { data, isPending, isPlaceholderData } = useQuery(tokenListQueryOptions(node.id, page));
  useClampPage(page, TOKEN_PAGE_SIZE, data?.total, setPage);
  const confirm = useConfirm();
  const revokeToken = useRevokeToken(node.id);
  const deleteToken = useDeleteToken(node.id);

  const revoke = async (token: PersonalAccessToken) => {
    if (await confirm(revokeTokenConfirmation()))
      await revokeToken.mutateAsync(token.id).catch((error: unknown) => console.error('revoke token failed', error));
  };
  const remove = async (token: PersonalAccessToken) => {
    if (await confirm(deleteTokenConfirmation()))
      await deleteToken.mutateAsync(token.id).catch((error: unknown) => console.error('delete token failed', error));
  };

  return (
    <Card
      title={t('tokens.title')}
      actions={
        <Button variant="secondary" disabled={node.isLocal} onClick={() => setFormOpen(true)}>
          {t('tokens.add')}
        </Button>
      }
    >
      <div style={{ minHeight: '230px' }} className="flex flex-col">
        {isPending ? (
          <div className="flex flex-1 items-center justify-center">
            <Spinner className="size-6" />
          </div>
        ) : !data || data.data.length === 0 ? (
          <EmptyState
            title={t('tokens.empty')}
            description={t(node.isLocal ? 'tokens.emptyLocal' : 'tokens.emptyHint')}
          />
        ) : (
          <>
            <div className="flex-1">
              <Table>
                <THead>
                  <Th>{t('tokens.column.name')}</Th>
                  <Th>{t('tokens.column.status')}</Th>
                  <Th>
                    <span className="sr-only">{t('ui.actions')}</span>
                  </Th>
                </THead>
                <TBody>
                  {data.data.map((token) => {
                    const status = tokenStatus(token);
                    return (
                      <Tr key={token.id}>
                        <Td className="font-medium">{token.name}</Td>
                        <Td>
                          <Badge tone={statusTone[status]}>{t(statusLabel[status])}</Badge>
                        </Td>
                        <Td className="w-12 text-right">
                          <ActionMenu
                            label={t('tokens.actionsFor', { name: token.name })}
                            items={[
                              {
                                label: t('tokens.revoke'),
                                isHidden: token.revoked,
                                onSelect: () => void revoke(token),
                              },
                              { label: t('tokens.delete'), isDanger: true, onSelect: () => void remove(token) },
                            ]}
                          />
                        </Td>
                      </Tr>
                    );
                  })}
                </TBody>
              </Table>
            </div>
            <Pagination
              page={data.page}
              limit={data.limit}
              total={data.total}
              onPageChange={setPage}
              isLoading={isPlaceholderData}
            />
          </>
        )}
      </div>
      <TokenFormDialog nodeId={node.id} open={isFormOpen} onClose={() => setFormOpen(false)} onCreated={setCreated} />
      <TokenCreatedDialog token={created} onClose={() => setCreated(null)} />
    </Card>
  );
}
