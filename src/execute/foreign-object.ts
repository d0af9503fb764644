/** The error of a create-once helper that finds someone else's object under its name. */
import { CodedError } from '../errors.js';

/** An object of the same name that drydock did not make for this operation, node and step. */
export class ForeignObjectError extends CodedError<
  'ForeignObject',
  { readonly kind: string; readonly namespace: string; readonly name: string }
> {
  override readonly name = 'ForeignObjectError';
  constructor(data: { readonly kind: string; readonly namespace: string; readonly name: string }) {
    super(
      'ForeignObject',
      `${data.kind} ${data.namespace}/${data.name} exists but was not made by drydock for this operation and node; delete or rename it`,
      data,
    );
  }
}
