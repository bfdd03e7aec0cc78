import { defaults, type Domain } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { PlusIcon } from '../../components/ui/icons';
import { Pagination } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Th, THead } from '../../components/ui/table';
import { usePageStepBack } from '../../lib/use-page-step-back';
import { domainListQueryOptions } from '../../queries/domains';
import { DomainFormDialog } from './domain-form-dialog';
import { DomainRow } from './domain-row';
import { useDeleteDomainAction } from './use-delete-domain';

/** null: closed; 'new': the create form; a domain: its edit form. */
type FormState = null | 'new' | Domain;

/** /domains (console-spec §2): the domains, each expandable to the services published on it. */
export function DomainsPage() {
  const [page, setPage] = useState(1);
  const [formState, setFormState] = useState<FormState>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());
  const query = useQuery(domainListQueryOptions({ page, limit: defaults.pageSize }));
  const deleteDomain = useDeleteDomainAction();

  const rows = query.data?.data ?? [];
  usePageStepBack(query.isSuccess && rows.length === 0 && page > 1, setPage);

  const toggle = (id: number) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  const addDomain = () => setFormState('new');

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h1 className="text-2xl font-semibold">Domains</h1>
        <Button onClick={addDomain}>
          <PlusIcon className="size-4" /> Add Domain
        </Button>
      </div>
      <Card>
        {query.isPending ? (
          <div className="flex justify-center py-10">
            <Spinner label="Loading domains" />
          </div>
        ) : query.isError ? (
          <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">Could not load the domains.</p>
        ) : query.data.total === 0 ? (
          <EmptyState
            title="No domains yet"
            description="Domains you publish services on appear here with their certificate status. Point the domain's DNS at this gateway first, then add it here; services are exposed from Client / Nodes."
            actionLabel="Add Domain"
            onAction={addDomain}
          />
        ) : (
          <>
            <Table>
              <THead>
                <Th className="w-px">
                  <span className="sr-only">Expand</span>
                </Th>
                <Th>Domain</Th>
                <Th>SSL Certs</Th>
                <Th className="hidden sm:table-cell">Owner</Th>
                <Th className="hidden sm:table-cell">Created At</Th>
                <Th>
                  <span className="sr-only">Actions</span>
                </Th>
              </THead>
              <TBody>
                {rows.map((domain) => (
                  <DomainRow
                    key={domain.id}
                    domain={domain}
                    isExpanded={expanded.has(domain.id)}
                    onToggle={() => toggle(domain.id)}
                    onEdit={() => setFormState(domain)}
                    onDelete={() => void deleteDomain(domain)}
                  />
                ))}
              </TBody>
            </Table>
            <Pagination page={page} limit={query.data.limit} total={query.data.total} onPageChange={setPage} />
          </>
        )}
      </Card>
      <DomainFormDialog
        {...(formState !== null && formState !== 'new' ? { domain: formState } : {})}
        open={formState !== null}
        onClose={() => setFormState(null)}
      />
    </div>
  );
}
