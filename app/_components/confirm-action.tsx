/**
 * A destructive button with a second step: "Revoke" becomes "Confirm
 * revoke" / "Keep", so one stray click (or tap) never ends a token, grant or
 * lease. The row that is confirming is the page's state (`confirming`), so
 * only one row asks at a time.
 */
export function ConfirmAction(props: {
  id: string;
  confirming: string | null;
  setConfirming: (id: string | null) => void;
  label: string;
  confirmLabel: string;
  ariaLabel?: string;
  pending: boolean;
  onConfirm: () => void;
}) {
  if (props.confirming !== props.id) {
    return (
      <button className="danger" type="button" onClick={() => props.setConfirming(props.id)} aria-label={props.ariaLabel}>
        {props.label}
      </button>
    );
  }
  return (
    <span className="form-row tight">
      <button className="danger" type="button" disabled={props.pending} onClick={props.onConfirm}>
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => props.setConfirming(null)}>
        Keep
      </button>
    </span>
  );
}
