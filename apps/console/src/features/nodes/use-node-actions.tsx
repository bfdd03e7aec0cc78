import type { Node, ServiceType } from '@postern/contract';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useConfirm } from '../../components/ui/confirm';
import type { MenuItem } from '../../components/ui/menu';
import { settleStoredChange } from '../../lib/api';
import { downloadNodeConfig, useDeleteNode, useSetNodeEnabled } from '../../queries/nodes';
import { HttpServiceFormDialog, TcpServiceFormDialog } from '../services/service-form-dialogs';
import { connectConfirmation, deleteConfirmation, disconnectConfirmation } from './node-confirmations';
import { NodeFormDialog } from './node-form-dialog';
import { useCan } from '../../queries/account';
import { t } from '../../i18n/i18n';

type MenuOptions = { withView?: boolean; withExpose?: boolean; withDelete?: boolean };

/** Failures are already reported by the API layer (toast for 400, logout for 401/403/429); log the rest. */
function logFailure(action: string) {
  return (error: unknown) => console.error(`${action} failed`, error);
}

/**
 * The node actions shared by the list row menu and the detail page, with their confirmations and dialogs.
 * Render `dialogs` once where the hook is used.
 */
export function useNodeActions({ onDeleted }: { onDeleted?: (node: Node) => void } = {}) {
  const confirm = useConfirm();
  const navigate = useNavigate();
  const setEnabled = useSetNodeEnabled();
  const deleteNode = useDeleteNode();
  const [editing, setEditing] = useState<Node | null>(null);
  const mayOperate = useCan('operate');
  const mayReadSecrets = useCan('read-secrets');
  const [exposing, setExposing] = useState<{ node: Node; type: ServiceType } | null>(null);

  const toggleEnabled = async (node: Node) => {
    const isAccepted = await confirm(node.enabled ? disconnectConfirmation(node) : connectConfirmation(node));
    if (isAccepted)
      await setEnabled.mutateAsync({ id: node.id, enabled: !node.enabled }).catch(logFailure('connect/disconnect'));
  };

  const remove = async (node: Node) => {
    if (!(await confirm(deleteConfirmation(node)))) return;
    try {
      // Deleted even when the gateway has not caught up (the toast says so): leave its page all the same.
      await settleStoredChange(deleteNode.mutateAsync(node.id));
      onDeleted?.(node);
    } catch (error) {
      logFailure('delete node')(error);
    }
  };

  /**
   * The local node has no edit, connect, disconnect, delete or download actions (the spec's "States and transitions").
   */
  const menuItems = (
    node: Node,
    { withView = false, withExpose = false, withDelete = false }: MenuOptions = {},
  ): MenuItem[] => [
    {
      label: t('nodes.menu.view'),
      isHidden: !withView,
      onSelect: () => void navigate({ to: '/nodes/$id', params: { id: String(node.id) } }),
    },
    { label: t('nodes.menu.edit'), isHidden: node.isLocal || !mayOperate, onSelect: () => setEditing(node) },
    {
      label: t('nodes.menu.exposeHttp'),
      isHidden: !withExpose || !mayOperate,
      onSelect: () => setExposing({ node, type: 'http' }),
    },
    {
      label: t('nodes.menu.exposeTcp'),
      isHidden: !withExpose || !mayOperate,
      onSelect: () => setExposing({ node, type: 'tcp' }),
    },
    {
      label: t('nodes.downloadConfig'),
      isHidden: node.isLocal || !mayReadSecrets,
      onSelect: () => void downloadNodeConfig(node.id).catch(logFailure('download config')),
    },
    {
      label: node.enabled ? t('nodes.menu.disconnect') : t('nodes.menu.connect'),
      isHidden: node.isLocal || !mayOperate,
      isDanger: node.enabled,
      onSelect: () => void toggleEnabled(node),
    },
    {
      label: t('nodes.menu.delete'),
      isHidden: node.isLocal || !withDelete || !mayOperate,
      isDanger: true,
      onSelect: () => void remove(node),
    },
  ];

  const closeExpose = () => setExposing(null);
  const dialogs = (
    <>
      <NodeFormDialog open={editing !== null} node={editing} onClose={() => setEditing(null)} />
      {exposing?.type === 'http' && <HttpServiceFormDialog node={exposing.node} open onClose={closeExpose} />}
      {exposing?.type === 'tcp' && <TcpServiceFormDialog node={exposing.node} open onClose={closeExpose} />}
    </>
  );

  return { menuItems, dialogs, toggleEnabled, remove, edit: setEditing };
}
