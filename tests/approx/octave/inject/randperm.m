function p = randperm(n)
% Test harness stand-in for randperm (Nys.m's landmark draw): the next injected permutation of
% 1..n (Nys.m keeps its first m entries).
global MEKA_INJECT
MEKA_INJECT.rp_next = MEKA_INJECT.rp_next + 1;
i = MEKA_INJECT.rp_next;
if i > numel(MEKA_INJECT.randperm)
  error('harness: Nys.m asked for randperm draw %d; only %d injected', i, numel(MEKA_INJECT.randperm));
end
p = double(MEKA_INJECT.randperm{i}(:)');
if numel(p) ~= n
  error('harness: randperm draw %d: Nys.m asked for a permutation of %d, injected %d', i, n, numel(p));
end
end
