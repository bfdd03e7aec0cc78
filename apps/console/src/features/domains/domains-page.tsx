import { defaults, type Domain } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useCallback, useState } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { PlusIcon } from '../../components/ui/icons';
import { PageSizeSelect, SearchField } from '../../components/ui/list-controls';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Th, THead } from '../../components/ui/table';
import {
  domainViewPrefix,
  openDomainIds,
  openDomainIdsToSearch,
  validateDomainsSearch,
  type DomainsSearch,
  type PagedSearch,
} from '../../lib/list-search';
import { domainListQueryOptions } from '../../queries/domains';
import { DomainFormDialog } from './domain-form-dialog';
import { DomainRow } from './domain-row';
import { UploadCertificateDialog } from './upload-certificate-dialog';
import { useDeleteDomainAction } from './use-delete-domain';
import { useCanOnEveryNode } from '../../queries/account';
import { t } from '../../i18n/i18n';

/** null: closed; 'new': the create form; a domain: its edit form. */
type FormState = null | 'new' | Domain;

/** /domains (the spec's "Screens and routes"): the domains, each expandable to the services published on it. */
export function DomainsPage() {
  // Not strict, so the page also renders outside the app's route tree (component tests).
  const search = validateDomainsSearch(useSearch({ strict: false }));
  const navigate = useNavigate();
  // A domain's settings reach every service on it, of any node: an account limited to some nodes only reads.
  const mayOperate = useCanOnEveryNode('operate');
  const page = search.page ?? 1;
  const limit = search.limit ?? defaults.pageSize;
  const q = search.q;
  // Each change of view is a history entry (Back returns to it); typing replaces the entry it started.
  const setView = useCallback(
    (next: Partial<PagedSearch>, replace = false) =>
      void navigate({ to: '.', search: (prev: DomainsSearch) => ({ ...prev, ...next }), replace }),
    [navigate],
  );
  const setPage = useCallback((next: number) => setView({ page: next === 1 ? undefined : next }), [setView]);
  const [formState, setFormState] = useState<FormState>(null);
  const [uploadFor, setUploadFor] = useState<Domain | null>(null);
  // Expanded rows are part of the view too (`open=12,15`), with their tables' views (domain-services.tsx).
  const expanded = openDomainIds(search);
  const query = useQuery(domainListQueryOptions({ page, limit, ...(q ? { search: q } : {}) }));
  const deleteDomain = useDeleteDomainAction();

  const rows = query.data?.data ?? [];
  useClampPage(page, limit, query.data?.total, setPage);

  const toggle = (id: number) =>
    void navigate({
      to: '.',
      search: (prev: DomainsSearch) => {
        const open = openDomainIds(prev);
        if (!open.includes(id)) return { ...prev, open: openDomainIdsToSearch([...open, id]) };
        // A closed row forgets its tables' views, as it did when they were its own state.
        const prefix = domainViewPrefix(id);
        const kept = Object.entries(prev).filter(([key]) => !key.startsWith(prefix));
        return { ...Object.fromEntries(kept), open: openDomainIdsToSearch(open.filter((other) => other !== id)) };
      },
      resetScroll: false,
    });

  const addDomain = () => setFormState('new');

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h1 className="text-2xl font-semibold">{t('domains.title')}</h1>
        {mayOperate && (
          <Button onClick={addDomain}>
            <PlusIcon className="size-4" /> {t('domains.add')}
          </Button>
        )}
      </div>
      <SearchField
        label={t('domains.search')}
        value={q ?? ''}
        onSearch={(text) => setView({ q: text || undefined, page: undefined }, true)}
      />
      <Card>
        {query.isPending ? (
          <div className="flex justify-center py-10">
            <Spinner label={t('domains.loading')} />
          </div>
        ) : query.isError ? (
          <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">{t('domains.loadError')}</p>
        ) : query.data.total === 0 && q ? (
          <p role="status" className="px-4 py-10 text-center text-sm text-gray-600 dark:text-gray-300">
            {t('domains.noMatch', { query: q })}
          </p>
        ) : query.data.total === 0 ? (
          <EmptyState
            title={t('domains.empty')}
            description={t('domains.emptyHint')}
            actionLabel={t('domains.add')}
            {...(mayOperate ? { onAction: addDomain } : {})}
          />
        ) : (
          <>
            <Table>
              <THead>
                <Th className="w-px">
                  <span className="sr-only">{t('domains.column.expand')}</span>
                </Th>
                <Th>{t('domains.column.domain')}</Th>
                <Th>{t('domains.column.ssl')}</Th>
                <Th className="hidden sm:table-cell">{t('domains.column.owner')}</Th>
                <Th className="hidden sm:table-cell">{t('domains.column.created')}</Th>
                <Th>
                  <span className="sr-only">{t('ui.actions')}</span>
                </Th>
              </THead>
              <TBody>
                {rows.map((domain) => (
                  <DomainRow
                    key={domain.id}
                    domain={domain}
                    isExpanded={expanded.includes(domain.id)}
                    onToggle={() => toggle(domain.id)}
                    onEdit={() => setFormState(domain)}
                    onUpload={() => setUploadFor(domain)}
                    onDelete={() => void deleteDomain(domain)}
                  />
                ))}
              </TBody>
            </Table>
            <Pagination
              page={page}
              limit={query.data.limit}
              total={query.data.total}
              onPageChange={setPage}
              isLoading={query.isPlaceholderData}
            />
            <div className="flex justify-end border-t border-gray-200 px-4 py-2 dark:border-gray-800">
              <PageSizeSelect
                value={limit}
                onChange={(size) => setView({ limit: size === defaults.pageSize ? undefined : size, page: undefined })}
              />
            </div>
          </>
        )}
      </Card>
      <DomainFormDialog
        {...(formState !== null && formState !== 'new' ? { domain: formState } : {})}
        open={formState !== null}
        onClose={() => setFormState(null)}
      />
      <UploadCertificateDialog domain={uploadFor} onClose={() => setUploadFor(null)} />
    </div>
  );
}
