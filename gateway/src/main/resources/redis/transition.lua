-- One compare-and-set on (state, epoch). Entering a terminal state starts the tombstone and, when asked,
-- claims the open cleanup obligations for the calling replica. A move that passes through a state on its way (READY
-- on the way to ATTACHED) is checked against the sources of that first step and grows the epoch by two.
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket state counts  KEYS[4] bucket engine-held index
-- ARGV[1] session id  ARGV[2] tenant or ''  ARGV[3] expected epoch or ''  ARGV[4] legal sources of the first step as ',A,B,'
-- ARGV[5] target  ARGV[6] '1' if target is terminal  ARGV[7] reason  ARGV[8] now ms  ARGV[9] retention ms
-- ARGV[10] claim ttl ms or '' for no claim  ARGV[11] steps (1, or 2 through a state)
-- ARGV[12..] settled obligations as pairs: id, obligation json
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'NOT_FOUND'}
end
local h = redis.call('HMGET', KEYS[1], 'tenant', 'state', 'epoch', 'pending')
if ARGV[2] ~= '' and h[1] ~= ARGV[2] then
  return {'NOT_FOUND'}
end
local epoch = tonumber(h[3])
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= epoch then
  return {'STALE_EPOCH', redis.call('HGETALL', KEYS[1])}
end
if not string.find(ARGV[4], ',' .. h[2] .. ',', 1, true) then
  return {'ILLEGAL', redis.call('HGETALL', KEYS[1])}
end
local now = tonumber(ARGV[8])
local pending = tonumber(h[4] or '0') or 0
if #ARGV > 11 then
  for i = 12, #ARGV, 2 do
    redis.call('HSET', KEYS[1], 'o:' .. ARGV[i], ARGV[i + 1])
  end
  pending = count_pending(KEYS[1])
  redis.call('HSET', KEYS[1], 'pending', pending)
end
redis.call('HSET', KEYS[1], 'state', ARGV[5], 'epoch', string.format('%d', epoch + tonumber(ARGV[11])),
  'updated', ARGV[8])
redis.call('HINCRBY', KEYS[3], h[2], -1)
redis.call('HINCRBY', KEYS[3], ARGV[5], 1)
local token = 0
if ARGV[6] == '1' then
  local tomb = string.format('%d', now + tonumber(ARGV[9]))
  redis.call('HSET', KEYS[1], 'reason', ARGV[7], 'terminal_at', ARGV[8], 'tomb', tomb)
  if pending > 0 and ARGV[10] ~= '' then
    token = redis.call('HINCRBY', KEYS[1], 'ctoken', 1)
    local claim_until = string.format('%d', now + tonumber(ARGV[10]))
    redis.call('HSET', KEYS[1], 'cuntil', claim_until)
    redis.call('ZADD', KEYS[2], claim_until, ARGV[1])
  elseif pending > 0 then
    redis.call('ZADD', KEYS[2], ARGV[8], ARGV[1])
  else
    redis.call('ZADD', KEYS[2], tomb, ARGV[1])
  end
  index_held(KEYS[1], KEYS[4], ARGV[1])
end
return {'OK', token, redis.call('HGETALL', KEYS[1])}
