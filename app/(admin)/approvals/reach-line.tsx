/**
 * One line of reach: as whom and with what reach an action runs ("runs as an
 * unprivileged lease user · workspace read-write · no network · 1 GiB / 512
 * procs / 300 s"). The items come from the hub (server/approvals/view.ts
 * `reachOf`, built from the compiled policy); more facts join as items.
 */
export interface ReachItem {
  key: string;
  text: string;
}

export function ReachLine({ items }: { items: readonly ReachItem[] }) {
  if (items.length === 0) return null;
  return (
    <p className="reach-line" data-testid="reach-line">
      {items.map((item, i) => (
        <span key={item.key} data-reach={item.key}>
          {i === 0 ? "" : " · "}
          {item.text}
        </span>
      ))}
    </p>
  );
}
