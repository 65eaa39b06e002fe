import { digestId } from '@singleshot/core';
import type { DigestRecord, DigestRecords, DigestStore, MessageRecord, OperationStore } from '@singleshot/store';
import { formatTime } from './format';
import { statusText } from './lifecycle-rows';

/** What operator commands read of digests. */
export interface DigestReaders {
  digests: Pick<DigestStore, 'membership' | 'openState'>;
  records: Pick<DigestRecords, 'read'>;
  operations: Pick<OperationStore, 'get'>;
}

/** Where a message stands in one digest group its decision joined it to (`messages show`). */
export interface MessageInDigest {
  route: string;
  recipient: string;
  key: string;
  group: string;
  /** The digest it is in (absent when it never joined, or a cancel kept it out). */
  id?: string;
  /** `open`, `closing` (closed, flush being enqueued), `closed` (its flush operation exists), `emptied`, `removed` (a cancel took it out) or `not_joined`. */
  state: 'open' | 'closing' | 'closed' | 'emptied' | 'removed' | 'not_joined';
  /** In words: item count and close time when open, the flush operation's status when closed. */
  detail: string;
  /** The digest's flush operation, once it closed. */
  operationKey?: string;
}

/** Each digest a message's decision joined it to, and where the message stands in it. */
export async function messageDigests(message: MessageRecord, r: DigestReaders): Promise<MessageInDigest[]> {
  return Promise.all(
    message.digests.map(async (d): Promise<MessageInDigest> => {
      const base = { route: d.route, recipient: d.recipient, key: d.key, group: d.group };
      const place = await r.digests.membership(d.group, message.messageKey);
      if (place.state === 'none') return { ...base, state: 'not_joined', detail: message.cancelled ? 'kept out by the cancel' : 'the decision has not joined it yet' };
      if (place.state === 'removed') return { ...base, ...(place.seq ? { id: digestId(d.group, place.seq) } : {}), state: 'removed', detail: 'taken out by a cancel; not in any digest' };
      const id = digestId(d.group, place.seq);
      const record = await r.records.read(id);
      if (record) {
        if (record.state === 'empty') return { ...base, id, state: 'emptied', detail: 'every member cancelled: nothing sent' };
        const op = await r.operations.get(record.operationKey);
        return { ...base, id, state: 'closed', operationKey: record.operationKey, detail: `closed ${formatTime(record.closedAt)} (${record.reason}), ${record.members.length} item(s); flush ${op ? statusText(op) : 'unclaimed'}` };
      }
      const open = await r.digests.openState(d.group);
      if (open?.seq === place.seq) return { ...base, id, state: 'open', detail: `${open.count} item(s), closes ${formatTime(open.closeAt)}` };
      return { ...base, id, state: 'closing', detail: 'closed; its flush is being enqueued' };
    }),
  );
}

/** `ops show`'s rows for a digest: what it gathered, why and when it closed, its flush and its members in order. */
export function digestRows(record: DigestRecord): string[][] {
  return [
    ['digest', record.id],
    ['route', `${record.route} to ${record.recipient}${record.key ? `, key ${record.key}` : ''}`],
    ['window', `opened ${formatTime(record.openedAt)}, due to close ${formatTime(record.closeAt)}`],
    ['closed', `${formatTime(record.closedAt)} (${record.reason})`],
    ['flush', record.state === 'flush' ? record.operationKey : 'none: every member was cancelled'],
    ['members', `${record.members.length}`],
    ...record.members.map((m, i) => [`  #${i + 1}`, m]),
  ];
}
