function nys_injected(infile, outfile)
% Run the release's Nys.m (the standard Nystrom map MEKA uses per cluster, and the Nys baseline)
% on all points with an injected landmark permutation (inject/randperm.m); meka.m itself cannot
% run with one cluster (min over a row vector returns a scalar). Saves U (n x k), S = I, err.
global MEKA_INJECT
in = load(infile);
MEKA_INJECT = struct('randperm', {in.randperm}, 'rp_next', 0, 'rs_next', 0, 'randsample', {{}});
A = sparse(in.A);
k = double(in.k);
U = Nys(A, min(2 * k, size(A, 1)), k, double(in.gamma));
S = eye(k);
rs = double(in.rows(:)');
tmpK = exp(-sqdist(A(rs,:), A) * double(in.gamma));
err = norm(tmpK - (U(rs',:) * S) * U', 'fro') / norm(tmpK, 'fro');
used_randsample = 0;
used_randperm = MEKA_INJECT.rp_next;
U = full(U); err = full(err);
save('-v7', outfile, 'U', 'S', 'err', 'used_randsample', 'used_randperm');
end
