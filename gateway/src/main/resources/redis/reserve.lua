-- Reserve an idempotency key for a new session, or answer the session that already holds it (see reserve_key).
-- Runs in the tenant's slot. Also enforces the tenant's live-session quota.
-- KEYS[1] idempotency key  KEYS[2] tenant live index (member: session id, score: lease expiry hint)
-- ARGV[1] session id  ARGV[2] fingerprint  ARGV[3] now ms  ARGV[4] key ttl ms  ARGV[5] max live  ARGV[6] lease expiry ms
-- ARGV[7] '' or the value of a key whose holder ended and may be replaced
return reserve_key(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
