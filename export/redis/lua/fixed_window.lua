-- fixed_window: admitted cost per window [kW, (k+1)W), aligned to the Unix
-- epoch; a request of cost n is admitted when count + n <= limit.
-- ARGV[1] limit, ARGV[2] window (µs). KEYS[1] is a hash: k = the window's
-- index, n = its count. Integer arithmetic, exact below 2^53.
local limit, W = tonumber(ARGV[1]), tonumber(ARGV[2])
local key = KEYS[1]
local k = math.floor(now / W)
local count = 0
local s = redis.call('HMGET', key, 'k', 'n')
if s[1] and tonumber(s[2]) > 0 and tonumber(s[1]) >= k then
  -- the key's window; a time before it (a clock stepping back) stays in it
  k, count = tonumber(s[1]), tonumber(s[2])
end
local toEnd = (k + 1) * W - now
local reset = toEnd
if count == 0 then reset = 0 end
if cost <= 0 then return {1, limit - count, 0, reset, 0} end
if cost > limit then return {0, limit - count, NEVER, reset, 0} end
if count + cost > limit then return {0, limit - count, toEnd, reset, 0} end
if not dry then
  redis.call('HSET', key, 'k', num(k), 'n', num(count + cost))
  keep({key}, toEnd)
end
return {1, limit - count - cost, 0, toEnd, 0}
