-- Write back discharged obligations, if the caller still holds the cleanup claim (fencing by claim token).
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket engine-held index
-- ARGV[1] session id  ARGV[2] claim token  ARGV[3] retry at ms  ARGV[4] keep tombstone until ms or ''
-- ARGV[5] now ms  ARGV[6..] obligation field, json pairs
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local h = redis.call('HMGET', KEYS[1], 'ctoken', 'cuntil', 'tomb')
if not h[2] or tonumber(h[1]) ~= tonumber(ARGV[2]) then
  return 0
end
for i = 6, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
local pending = count_pending(KEYS[1])
local tomb = h[3]
if ARGV[4] ~= '' and tonumber(ARGV[4]) > tonumber(tomb) then
  tomb = ARGV[4]
end
redis.call('HSET', KEYS[1], 'pending', pending, 'tomb', tomb, 'updated', ARGV[5])
redis.call('HDEL', KEYS[1], 'cuntil')
if pending > 0 then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
else
  redis.call('ZADD', KEYS[2], tomb, ARGV[1])
end
index_held(KEYS[1], KEYS[3], ARGV[1])
return 1
