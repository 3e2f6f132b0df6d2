-- Shared by every session script: prepended to each one when it is loaded (see RedisScript).
-- reserve.lua and create.lua call reserve_key and create_record with their own keys; allocate.lua calls both in one
-- step where one Redis holds every key (see RedisDeployment).

local function is_live(state)
  return state == 'ALLOCATED' or state == 'READY' or state == 'ATTACHED'
end

-- A session record as a table of its fields, read in one HGETALL; nil when there is no such session. A script that
-- reads the record this way decides from the table and answers it (see flat) instead of reading the record again.
local function read_record(session_key)
  local all = redis.call('HGETALL', session_key)
  if #all == 0 then
    return nil
  end
  local record = {}
  for i = 1, #all, 2 do
    record[all[i]] = all[i + 1]
  end
  return record
end

-- The record's fields as HGETALL answers them: field, value pairs.
local function flat(record)
  local all = {}
  for field, value in pairs(record) do
    all[#all + 1] = field
    all[#all + 1] = value
  end
  return all
end

-- What a record's cleanup obligations (fields o:<id>, JSON) still owe, each decoded once: how many are open
-- (PENDING), and the latest moment an engine may still hold KV for any of them (an open obligation, or a hold with
-- no known end: '+inf'; nil when no engine holds anything).
local function obligations_of(record)
  local pending = 0
  local until_ms = nil
  for field, value in pairs(record) do
    if string.sub(field, 1, 2) == 'o:' then
      local o = cjson.decode(value)
      if o.status == 'PENDING' then
        pending = pending + 1
      end
      if o.status ~= 'DISCHARGED' then
        local held = o.heldUntil
        if o.status == 'PENDING' or type(held) ~= 'number' then
          until_ms = '+inf'
        elseif until_ms ~= '+inf' and (until_ms == nil or held > until_ms) then
          until_ms = held
        end
      end
    end
  end
  return pending, until_ms
end

-- Counts the open cleanup obligations of one session record.
local function count_pending(session_key)
  local record = read_record(session_key)
  if not record then
    return 0
  end
  local pending = obligations_of(record)
  return pending
end

-- Puts a terminal session in its bucket's engine-held index at until_ms (see obligations_of), or takes it out when
-- nothing is held.
local function place_held(held_key, session_id, until_ms)
  if until_ms == nil then
    redis.call('ZREM', held_key, session_id)
  elseif until_ms == '+inf' then
    redis.call('ZADD', held_key, '+inf', session_id)
  else
    redis.call('ZADD', held_key, string.format('%d', until_ms), session_id)
  end
end

-- Keeps a session's entry in its bucket's engine-held index: a terminal session an engine may still physically
-- hold KV for, scored by the latest moment it may hold it (an open obligation, or a hold with no known end: +inf).
-- Live sessions and sessions no engine holds anything for are not in the index.
local function index_held(session_key, held_key, session_id)
  local record = read_record(session_key)
  if not record or is_live(record.state) then
    redis.call('ZREM', held_key, session_id)
    return
  end
  local _, until_ms = obligations_of(record)
  place_held(held_key, session_id, until_ms)
end

-- Reserves an idempotency key for a new session, or answers the session that already holds it ({'EXISTING', value})
-- or the tenant's quota ({'QUOTA', live}); {'RESERVED', ''} when reserved.
-- ended_holder: '' or the key's value '<id>|<fingerprint>' when the caller found that holder's record ended: the key is
-- then taken over, but only while it still holds exactly that value. An ended session never becomes live again, so
-- the caller's verdict still holds; a changed value means another attempt got there first.
local function reserve_key(idem_key, live_key, session_id, fingerprint, now_ms, key_ttl_ms, max_live, expiry_ms,
                           ended_holder)
  local existing = redis.call('GET', idem_key)
  if existing then
    if existing ~= ended_holder then
      return {'EXISTING', existing}
    end
    -- The ended holder no longer counts against the quota, even if its own index update was lost.
    redis.call('ZREM', live_key, string.sub(existing, 1, string.find(existing, '|', 1, true) - 1))
  end
  redis.call('ZREMRANGEBYSCORE', live_key, '-inf', now_ms)
  local live = redis.call('ZCARD', live_key)
  if live >= tonumber(max_live) then
    return {'QUOTA', tostring(live)}
  end
  redis.call('SET', idem_key, session_id .. '|' .. fingerprint, 'PX', key_ttl_ms)
  redis.call('ZADD', live_key, expiry_ms, session_id)
  return {'RESERVED', ''}
end

-- Creates a session record from ARGV[first_field..] (field, value pairs) and indexes it at its lease expiry, unless
-- it exists already (an idempotent retry: {'EXISTING', its fields}); {'CREATED'} when created.
local function create_record(session_key, due_key, counts_key, session_id, expiry_ms, first_field)
  if redis.call('EXISTS', session_key) == 1 then
    return {'EXISTING', redis.call('HGETALL', session_key)}
  end
  redis.call('HSET', session_key, unpack(ARGV, first_field))
  redis.call('ZADD', due_key, expiry_ms, session_id)
  redis.call('HINCRBY', counts_key, 'ALLOCATED', 1)
  return {'CREATED'}
end
