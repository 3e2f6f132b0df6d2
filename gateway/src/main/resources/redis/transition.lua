-- One compare-and-set on (state, epoch). Entering a terminal state starts the tombstone and, when asked,
-- claims the open cleanup obligations for the calling replica. A move that passes through a state on its way (READY
-- on the way to ATTACHED) is checked against the sources of that first step and grows the epoch by two.
-- The record is read once; every field the move changes is written in one HSET, and the answer is the record as
-- read with those changes.
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket state counts  KEYS[4] bucket engine-held index
-- KEYS[5] optional, where one Redis holds every key: the tenant's live index, which an ending session leaves here
-- ARGV[1] session id  ARGV[2] tenant or ''  ARGV[3] expected epoch or ''  ARGV[4] legal sources of the first step as ',A,B,'
-- ARGV[5] target  ARGV[6] '1' if target is terminal  ARGV[7] reason  ARGV[8] now ms  ARGV[9] retention ms
-- ARGV[10] claim ttl ms or '' for no claim  ARGV[11] steps (1, or 2 through a state)
-- ARGV[12..] settled obligations as pairs: id, obligation json
local record = read_record(KEYS[1])
if not record then
  return {'NOT_FOUND'}
end
if ARGV[2] ~= '' and record.tenant ~= ARGV[2] then
  return {'NOT_FOUND'}
end
local epoch = tonumber(record.epoch)
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= epoch then
  return {'STALE_EPOCH', flat(record)}
end
local source = record.state
if not string.find(ARGV[4], ',' .. source .. ',', 1, true) then
  return {'ILLEGAL', flat(record)}
end
local terminal = ARGV[6] == '1'
local now = tonumber(ARGV[8])
local writes = {}
local function set(field, value)
  record[field] = value
  writes[#writes + 1] = field
  writes[#writes + 1] = value
end
local settles = #ARGV > 11
for i = 12, #ARGV, 2 do
  set('o:' .. ARGV[i], ARGV[i + 1])
end
local pending = tonumber(record.pending or '0') or 0
local held_until = nil
if settles or terminal then
  pending, held_until = obligations_of(record)
end
if settles then
  set('pending', string.format('%d', pending))
end
set('state', ARGV[5])
set('epoch', string.format('%d', epoch + tonumber(ARGV[11])))
set('updated', ARGV[8])
local token = 0
if terminal then
  local tomb = string.format('%d', now + tonumber(ARGV[9]))
  set('reason', ARGV[7])
  set('terminal_at', ARGV[8])
  set('tomb', tomb)
  if pending > 0 and ARGV[10] ~= '' then
    token = (tonumber(record.ctoken or '0') or 0) + 1
    local claim_until = string.format('%d', now + tonumber(ARGV[10]))
    set('ctoken', string.format('%d', token))
    set('cuntil', claim_until)
    redis.call('ZADD', KEYS[2], claim_until, ARGV[1])
  elseif pending > 0 then
    redis.call('ZADD', KEYS[2], ARGV[8], ARGV[1])
  else
    redis.call('ZADD', KEYS[2], tomb, ARGV[1])
  end
end
redis.call('HSET', KEYS[1], unpack(writes))
redis.call('HINCRBY', KEYS[3], source, -1)
redis.call('HINCRBY', KEYS[3], ARGV[5], 1)
if terminal then
  place_held(KEYS[4], ARGV[1], held_until)
  if KEYS[5] then
    redis.call('ZREM', KEYS[5], ARGV[1])
  end
end
return {'OK', token, flat(record)}
