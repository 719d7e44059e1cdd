function meka_injected(infile, outfile)
% Run the authors' meka.m (found on the path, e.g. MEKA_MATLAB_DIR) on injected inputs.
%
% infile (a .mat written by tests/approx/meka_octave.py) holds A (n x d), k (total rank), gamma,
% noc, eta, centers (d x noc: what mykmeans returns), randsample and randperm (cell arrays of the
% draws, in the order meka.m and Nys.m ask for them) and rows (1-based rows of the error).
% meka.m's arithmetic is not changed: only mykmeans, randsample and randperm are replaced by the
% stand-ins in inject/. The error is the demos' formula on the given rows. outfile gets U, S
% (as meka.m returns them, sparse), err and the number of draws consumed.
global MEKA_INJECT
in = load(infile);
MEKA_INJECT = struct('centers', in.centers, 'randsample', {in.randsample}, ...
                     'randperm', {in.randperm}, 'rs_next', 0, 'rp_next', 0);
A = sparse(in.A);  % the authors' demos pass a sparse matrix (mykmeans.cpp requires one)
opts.noc = double(in.noc);
opts.eta = double(in.eta);
[U, S] = meka(A, double(in.k), double(in.gamma), opts);
rs = double(in.rows(:)');
tmpK = exp(-sqdist(A(rs,:), A) * double(in.gamma));
err = norm(tmpK - (U(rs',:) * S) * U', 'fro') / norm(tmpK, 'fro');
used_randsample = MEKA_INJECT.rs_next;
used_randperm = MEKA_INJECT.rp_next;
U = full(U); S = full(S); err = full(err);
save('-v7', outfile, 'U', 'S', 'err', 'used_randsample', 'used_randperm');
end
