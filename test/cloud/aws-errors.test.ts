/** AWS SDK errors → typed cloud errors: by code and HTTP status, the way the SDK reports them. */
import { strict as assert } from 'node:assert';
import { awsCloudError } from '../../src/cloud/index.js';

function sdkError(name: string, status?: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    $metadata: status === undefined ? {} : { httpStatusCode: status },
    $response: { headers },
  });
}

describe('aws error mapping', () => {
  const table: Array<[string, Error, string, number | undefined]> = [
    ['Auto Scaling throttling', sdkError('Throttling', 400), 'Throttled', 5],
    ['EC2 request limit', sdkError('RequestLimitExceeded', 503), 'Throttled', 5],
    ['429 with Retry-After', sdkError('TooManyRequestsException', 429, { 'retry-after': '12' }), 'Throttled', 12],
    ['Auto Scaling limit', sdkError('LimitExceeded', 400), 'QuotaExceeded', undefined],
    ['EC2 instance limit', sdkError('InstanceLimitExceeded', 400), 'QuotaExceeded', undefined],
    ['no capacity in the zone', sdkError('InsufficientInstanceCapacity', 500), 'QuotaExceeded', undefined],
    ['launch template gone', sdkError('InvalidLaunchTemplateId.NotFound', 400), 'NotFound', undefined],
    ['instance gone', sdkError('InvalidInstanceID.NotFound', 400), 'NotFound', undefined],
    ['scaling activity in progress', sdkError('ScalingActivityInProgress', 400), 'Transient', undefined],
    ['resource contention', sdkError('ResourceContention', 500), 'Transient', undefined],
    ['a 5xx', sdkError('InternalFailure', 500), 'Transient', undefined],
    [
      'no answer (connection reset)',
      Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' }),
      'Transient',
      undefined,
    ],
    ['no credentials', sdkError('CredentialsProviderError'), 'Permanent', undefined],
    ['access denied', sdkError('AccessDenied', 403), 'Permanent', undefined],
    ['a wrong request', sdkError('ValidationError', 400), 'Permanent', undefined],
  ];
  for (const [what, err, code, retryAfter] of table) {
    it(`${what} → ${code}`, () => {
      const mapped = awsCloudError(err, 'describe group workers', { groupId: 'workers' });
      assert.equal(mapped.code, code);
      assert.equal(mapped.data.retryAfterSeconds, retryAfter);
      assert.equal(mapped.data.groupId, 'workers');
      assert.match(mapped.message, /^aws: describe group workers: /);
    });
  }

  it('tells a person how to give drydock credentials', () => {
    assert.match(
      awsCloudError(sdkError('CredentialsProviderError'), 'list groups', {}).message,
      /IAM role for its service account/,
    );
  });
});
