-- Reserve an idempotency key for a new session, or answer the session that already holds it.
-- Runs in the tenant's slot. Also enforces the tenant's live-session quota.
-- KEYS[1] idempotency key  KEYS[2] tenant live index (member: session id, score: lease expiry hint)
-- ARGV[1] session id  ARGV[2] fingerprint  ARGV[3] now ms  ARGV[4] key ttl ms  ARGV[5] max live  ARGV[6] lease expiry ms
-- ARGV[7] '' or the key's value '<id>|<fingerprint>' when the caller found that holder's record ended: the key is
--         then taken over, but only while it still holds exactly that value. An ended session never becomes live
--         again, so the caller's verdict still holds; a changed value means another attempt got there first.
local existing = redis.call('GET', KEYS[1])
if existing then
  if existing ~= ARGV[7] then
    return {'EXISTING', existing}
  end
  -- The ended holder no longer counts against the quota, even if its own index update was lost.
  redis.call('ZREM', KEYS[2], string.sub(existing, 1, string.find(existing, '|', 1, true) - 1))
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
local live = redis.call('ZCARD', KEYS[2])
if live >= tonumber(ARGV[5]) then
  return {'QUOTA', tostring(live)}
end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[2], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
return {'RESERVED', ''}
